package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W7a worker: worker0 calls {@code relay("worker2", 1)} on worker1, which makes a blocking call to
 * worker2 from inside the request; 500 warm-up + 5,000 timed chains, then as many direct one-hop
 * calls worker0 → worker2 in the same processes.
 */
public final class W7ChainWorker {

  static final int WARMUP = 500;
  static final int CALLS = 5_000;

  private W7ChainWorker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W7ChainWorker::body);
  }

  private static void body(WorkerContext ctx) {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 50 : WARMUP;
      int n = ctx.quick() ? 500 : CALLS;
      for (int i = 0; i < warm; i++) {
        agent.rpcSync("worker1", BenchFunctions::relay, "worker2", 1);
      }
      long[] lat = new long[n];
      int v = 0;
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long s = System.nanoTime();
        v = agent.rpcSync("worker1", BenchFunctions::relay, "worker2", 1);
        lat[i] = System.nanoTime() - s;
      }
      long loop = System.nanoTime() - t0;
      if (v != 1) {
        throw new IllegalStateException("relay returned " + v);
      }
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("chain", Stats.latencySummary(lat, loop));
      for (int i = 0; i < warm; i++) {
        agent.rpcSync("worker2", BenchFunctions::noop, 1);
      }
      lat = new long[n];
      t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long s = System.nanoTime();
        agent.rpcSync("worker2", BenchFunctions::noop, 1);
        lat[i] = System.nanoTime() - s;
      }
      result.put("direct_1hop", Stats.latencySummary(lat, System.nanoTime() - t0));
      ctx.report(result);
    }
    agent.shutdown();
  }
}
