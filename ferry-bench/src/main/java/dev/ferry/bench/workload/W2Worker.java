package dev.ferry.bench.workload;

import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFuture;
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
        windowed(agent, warm, w);
        long t0 = System.nanoTime();
        windowed(agent, n, w);
        double seconds = (System.nanoTime() - t0) / 1e9;
        result.put("w" + w, Map.of("calls_per_s", n / seconds));
      }
      ctx.report(result);
    }
    agent.shutdown();
  }

  /** {@code n} calls with at most {@code window} outstanding; checks that every call returned 1. */
  private static void windowed(RpcAgent agent, int n, int window) {
    ArrayDeque<RpcFuture<Integer>> fifo = new ArrayDeque<>(window);
    long done = 0;
    for (int i = 0; i < n; i++) {
      if (fifo.size() == window) {
        done += fifo.removeFirst().await();
      }
      fifo.addLast(agent.rpcAsync("worker1", BenchFunctions::noop, 1));
    }
    while (!fifo.isEmpty()) {
      done += fifo.removeFirst().await();
    }
    if (done != n) {
      throw new IllegalStateException("checksum " + done + " != " + n + " calls");
    }
  }
}
