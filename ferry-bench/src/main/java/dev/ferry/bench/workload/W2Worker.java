package dev.ferry.bench.workload;

import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFuture;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W2 worker: worker0 issues {@code rpcAsync("worker1", noop, 1)} from one thread keeping at most
 * W futures outstanding (a FIFO; when it holds W, the oldest is awaited first), for W = 1, 8, 64,
 * 256 in that order in the same processes: 2,000 warm-up then 10,000 timed calls per window.
 */
public final class W2Worker {

  static final List<Integer> WINDOWS = List.of(1, 8, 64, 256);
  static final int WARMUP = 2_000;
  static final int CALLS = 10_000;
  /** Calls per block in a trace. */
  static final int TRACE_BLOCK = 500;

  /**
   * Diagnostics only: FERRY_W2_TRACE=1 prints, for every timed round, when it started (JVM uptime)
   * and how long each block of {@value #TRACE_BLOCK} calls took: a round slowed by the JIT or the
   * scheduler shows as a few long blocks, a slower steady state as uniformly longer ones.
   */
  private static final boolean TRACE = System.getenv("FERRY_W2_TRACE") != null;

  /**
   * Diagnostics only (not reported): FERRY_W2_EXTRA_ROUNDS=N runs N more timed rounds at window 64
   * after the four windows and prints their rate: the same processes' steady state.
   */
  private static final int EXTRA_ROUNDS = Integer.parseInt(System.getenv().getOrDefault("FERRY_W2_EXTRA_ROUNDS", "0"));

  private W2Worker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W2Worker::body);
  }

  private static void body(WorkerContext ctx) {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 200 : WARMUP;
      int n = ctx.quick() ? 1_000 : CALLS;
      Map<String, Object> result = new LinkedHashMap<>();
      for (int w : WINDOWS) {
        windowed(agent, warm, w, false);
        long[] callee0 = agent.rpcSync("worker1", BenchFunctions::processCounters);
        long[] caller0 = BenchFunctions.processCounters();
        long t0 = System.nanoTime();
        windowed(agent, n, w, TRACE);
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] caller = BenchFunctions.processCounters();
        long[] callee = agent.rpcSync("worker1", BenchFunctions::processCounters);
        result.put("w" + w, Map.of("calls_per_s", n / seconds,
            "cpu_us_per_call", (caller[0] - caller0[0] + callee[0] - callee0[0]) / 1e3 / n,
            "alloc_bytes_per_call", (caller[1] - caller0[1] + callee[1] - callee0[1]) / (double) n));
      }
      if (EXTRA_ROUNDS > 0) {
        long t0 = System.nanoTime();
        for (int r = 0; r < EXTRA_ROUNDS; r++) {
          windowed(agent, n, 64, TRACE);
        }
        System.err.printf("W2 extra rounds: %d x %d calls at window 64, %.0f calls/s%n", EXTRA_ROUNDS, n,
            EXTRA_ROUNDS * (double) n / ((System.nanoTime() - t0) / 1e9));
      }
      ctx.report(result);
    }
    agent.shutdown();
  }

  /**
   * {@code n} calls with at most {@code window} outstanding; checks that every call returned 1.
   * With {@code trace}, prints how long each block of {@value #TRACE_BLOCK} calls took.
   */
  private static void windowed(RpcAgent agent, int n, int window, boolean trace) {
    ArrayDeque<RpcFuture<Integer>> fifo = new ArrayDeque<>(window);
    int blocks = (n + TRACE_BLOCK - 1) / TRACE_BLOCK;
    long[] blockStarts = trace ? new long[blocks + 1] : null; // and when the last call completed
    long startedAtUptime = trace ? ManagementFactory.getRuntimeMXBean().getUptime() : 0;
    long done = 0;
    for (int i = 0; i < n; i++) {
      if (trace && i % TRACE_BLOCK == 0) {
        blockStarts[i / TRACE_BLOCK] = System.nanoTime();
      }
      if (fifo.size() == window) {
        done += fifo.removeFirst().await();
      }
      fifo.addLast(agent.rpcAsync("worker1", BenchFunctions::noop, 1));
    }
    while (!fifo.isEmpty()) {
      done += fifo.removeFirst().await();
    }
    if (trace) {
      blockStarts[blocks] = System.nanoTime();
      StringBuilder line = new StringBuilder("W2 trace: window ").append(window).append(" from uptime ")
          .append(startedAtUptime).append(" ms, us per ").append(TRACE_BLOCK).append(" calls:");
      for (int b = 1; b <= blocks; b++) {
        line.append(' ').append((blockStarts[b] - blockStarts[b - 1]) / 1_000);
      }
      System.err.println(line);
    }
    if (done != n) {
      throw new IllegalStateException("checksum " + done + " != " + n + " calls");
    }
  }
}
