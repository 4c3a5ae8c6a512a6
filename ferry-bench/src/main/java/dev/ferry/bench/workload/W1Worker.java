package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFunction1;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W1 worker: both ranks measure their idle CPU for 2 s right after init; then worker0 makes
 * 2,000 warm-up and 20,000 timed {@code rpcSync("worker1", noop, 1)}, each timed on its own.
 */
public final class W1Worker {

  static final int WARMUP = 2_000;
  static final int CALLS = 20_000;
  static final Duration IDLE = Duration.ofSeconds(2);

  private W1Worker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W1Worker::body);
  }

  private static void body(WorkerContext ctx) throws InterruptedException {
    // The probe's clock binds clock_gettime through the Foreign Function API on first use: link
    // it now, so that neither the linking nor the compilations it queues fall into the window.
    ProcessCpuClock.nanos();
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    Map<String, Object> result = new LinkedHashMap<>();
    double idle = Timing.idleCpuPercent(IDLE);
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 200 : WARMUP;
      int n = ctx.quick() ? 2_000 : CALLS;
      RpcFunction1<Integer, Integer> noop = BenchFunctions::noop;
      for (int i = 0; i < warm; i++) {
        agent.rpcSync("worker1", noop, 1);
      }
      long[] lat = new long[n];
      int r = 0;
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long t = System.nanoTime();
        r = agent.rpcSync("worker1", noop, 1);
        lat[i] = System.nanoTime() - t;
      }
      long loop = System.nanoTime() - t0;
      if (r != 1) {
        throw new IllegalStateException("noop(1) returned " + r);
      }
      result.putAll(Stats.latencySummary(lat, loop));
      // Calls that went over a synchronous-exchange lane (all but the first few, with lanes on).
      String lanes = agent.getDebugInfo().get("transport.lanes.exchanges");
      result.put("lane_exchanges", lanes == null ? 0 : Long.parseLong(lanes));
      // Not part of the workload's definition: the same probe once the JIT has settled (worker1
      // measures itself inside a call; worker0, waiting for that call, measures itself meanwhile).
      long cpu0 = ProcessCpuClock.nanos();
      long wall0 = System.nanoTime();
      double settled1 = agent.rpcSync("worker1", BenchFunctions::idleCpuPercent, (int) IDLE.toMillis());
      result.put("idle_settled_cpu_pct_rank0", 100.0 * (ProcessCpuClock.nanos() - cpu0) / (System.nanoTime() - wall0));
      result.put("idle_settled_cpu_pct_rank1", settled1);
    }
    result.put("idle_cpu_pct_rank" + ctx.rank(), idle);
    result.put("idle_cpu_exact_rank" + ctx.rank(), ProcessCpuClock.exact() ? 1 : 0);
    ctx.report(result);
    agent.shutdown();
  }
}
