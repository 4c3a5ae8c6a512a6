package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W4 worker (bench/WORKLOADS.md): worker1 owns every RRef. Part A: 1,000 warm-up and 10,000 timed
 * {@code remote("worker1", noop, 1)} + {@code toHere()}, the previous RRef dropped each time.
 * Part B: 5 batches of 10,000 {@code remote()} whose RRef is dropped at once, each followed by a
 * drain (poll the owner every 1 ms until it holds no RRef and the caller has no pending user).
 *
 * <p>"Dropped" is {@link RRef#close()}: Java has no reference counting, so the deterministic
 * release is close(); the garbage collector only catches what was forgotten. PyTorch drops by
 * refcount, which is as immediate.
 */
public final class W4Worker {

  static final int WARMUP = 1_000;
  static final int CALLS = 10_000;
  static final int BATCHES = 5;
  static final int BATCH = 10_000;
  static final double FLAT_MIB = 16.0;

  private W4Worker() {}

  public static void main(String[] args) {
    WorkerContext.run(args, W4Worker::body);
  }

  private static void body(WorkerContext ctx) throws InterruptedException {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    Map<String, Object> result = new LinkedHashMap<>();
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 100 : WARMUP;
      int n = ctx.quick() ? 1_000 : CALLS;
      int batches = ctx.quick() ? 3 : BATCHES;
      int batch = ctx.quick() ? 1_000 : BATCH;
      for (int i = 0; i < warm; i++) {
        try (RRef<Integer> rref = agent.remote("worker1", BenchFunctions::noop, 1)) {
          rref.toHere();
        }
      }
      long[] lat = new long[n];
      int v = 0;
      RRef<Integer> previous = null;
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        long s = System.nanoTime();
        RRef<Integer> rref = agent.remote("worker1", BenchFunctions::noop, 1);
        v = rref.toHere();
        lat[i] = System.nanoTime() - s;
        if (previous != null) {
          previous.close(); // the previous iteration's RRef is dropped when rebound
        }
        previous = rref;
      }
      long loop = System.nanoTime() - t0;
      previous.close();
      if (v != 1) {
        throw new IllegalStateException("noop(1) returned " + v);
      }
      result.put("remote_to_here", Stats.latencySummary(lat, loop));
      drain(agent, Duration.ofSeconds(60));
      double[] issue = new double[batches];
      double[] e2e = new double[batches];
      List<Double> rssCaller = new ArrayList<>();
      List<Double> rssOwner = new ArrayList<>();
      boolean allDrained = true;
      for (int b = 0; b < batches; b++) {
        long s = System.nanoTime();
        for (int i = 0; i < batch; i++) {
          agent.remote("worker1", BenchFunctions::noop, 1).close();
        }
        long issued = System.nanoTime();
        Map<String, Double> owner = drain(agent, Duration.ofSeconds(60));
        long drained = System.nanoTime();
        allDrained &= owner.get("num_owner_rrefs") == 0;
        issue[b] = batch / ((issued - s) / 1e9);
        e2e[b] = batch / ((drained - s) / 1e9);
        System.gc(); // RSS after a drained batch, with garbage the JVM can give back collected
        rssCaller.add(Timing.rssMib());
        rssOwner.add(agent.rpcSync("worker1", BenchFunctions::rrefDebug).get("rss_mib"));
      }
      double growthCaller = rssCaller.get(rssCaller.size() - 1) - rssCaller.get(0);
      double growthOwner = rssOwner.get(rssOwner.size() - 1) - rssOwner.get(0);
      Map<String, Object> dropped = new LinkedHashMap<>();
      dropped.put("issue_calls_per_s", Stats.median(issue));
      dropped.put("e2e_calls_per_s", Stats.median(e2e));
      dropped.put("all_drained", allDrained ? 1 : 0);
      dropped.put("rss_caller_batch1_mib", rssCaller.get(0));
      dropped.put("rss_caller_last_mib", rssCaller.get(rssCaller.size() - 1));
      dropped.put("rss_owner_batch1_mib", rssOwner.get(0));
      dropped.put("rss_owner_last_mib", rssOwner.get(rssOwner.size() - 1));
      dropped.put("rss_growth_caller_mib", growthCaller);
      dropped.put("rss_growth_owner_mib", growthOwner);
      dropped.put("memory_flat", growthCaller < FLAT_MIB && growthOwner < FLAT_MIB ? 1 : 0);
      result.put("remote_dropped", dropped);
    }
    ctx.report(result);
    agent.shutdown();
  }

  /** Polls the owner every 1 ms until it holds no RRef and this worker has no pending user. */
  private static Map<String, Double> drain(RpcAgent agent, Duration limit) throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (true) {
      Map<String, Double> owner = agent.rpcSync("worker1", BenchFunctions::rrefDebug);
      boolean localDone = agent.getDebugInfo().get("rref.num_pending_users").equals("0");
      if (owner.get("num_owner_rrefs") == 0 && localDone || System.nanoTime() > end) {
        return owner;
      }
      Thread.sleep(1); // the workload's 1 ms poll interval
    }
  }
}
