package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import dev.ferry.bench.harness.RunAggregate;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * W7 driver: the nested chain (W7a, {@link W7ChainWorker}) and the thread-exhaustion probe with a
 * blocking relay (W7b) and an {@code @AsyncExecution} relay (W7c), {@link W7ProbeWorker}.
 */
public final class W7Nested {

  /** The parts, in the order they run; {@code --parts} selects some. */
  public static final List<String> PARTS = List.of("chain", "probe_sync", "probe_async");

  private W7Nested() {}

  /** Runs the selected parts; each writes its own result file. */
  public static void run(BenchOptions options, Set<String> parts) throws Exception {
    if (parts.contains("chain")) {
      Map<String, Object> params = Map.of(
          "part", "chain", "warmup", W7ChainWorker.WARMUP, "calls", W7ChainWorker.CALLS);
      new Driver("w7_nested_chain", params, 3, W7ChainWorker.class, Duration.ofSeconds(240)).run(options);
    }
    for (String variant : List.of("sync", "async")) {
      if (!parts.contains("probe_" + variant)) {
        continue;
      }
      Map<String, Object> params = new LinkedHashMap<>();
      params.put("part", "probe");
      params.put("variant", variant);
      params.put("calls", W7ProbeWorker.CALLS);
      params.put("num_worker_threads", W7ProbeWorker.THREADS);
      params.put("rpc_timeout_s", W7ProbeWorker.TIMEOUT.toSeconds());
      params.put("responsive_check_delay_s", W7ProbeWorker.RESPONSIVE_DELAY.toSeconds());
      params.put("responsive_check_timeout_s", W7ProbeWorker.RESPONSIVE_TIMEOUT.toSeconds());
      params.put("shutdown_wait_s", W7ProbeWorker.SHUTDOWN_WAIT.toSeconds());
      params.put("others_shutdown_wait_s", W7ProbeWorker.OTHERS_SHUTDOWN_WAIT.toSeconds());
      params.put("relay", variant.equals("async") ? "BenchFunctions.asyncRelay (@AsyncExecution)"
          : "BenchFunctions.relay (blocking Rpc.rpcSync inside the call)");
      new Driver("w7_probe_" + variant, params, 3, W7ProbeWorker.class, Duration.ofSeconds(120))
          .extract(W7Nested::probeMetrics)
          .allowPartial()
          .run(options);
    }
  }

  /** Rank 0's probe figures plus every rank's shutdown outcome (w7_nested.py's probe_extract). */
  static Map<String, Double> probeMetrics(Map<Integer, Map<String, Object>> results) {
    Map<String, Double> out = new LinkedHashMap<>();
    RunAggregate.flatten(results.getOrDefault(0, Map.of())).forEach((k, v) -> {
      if (!k.startsWith("error_texts") && !k.equals("shutdown_finished")) {
        out.put(k, v);
      }
    });
    for (int r : new int[] {1, 2, 0}) {
      Object finished = results.getOrDefault(r, Map.of()).get("shutdown_finished");
      out.put("rank" + r + "_shutdown_finished", finished instanceof Number n ? n.doubleValue() : 0.0);
    }
    return out;
  }
}
