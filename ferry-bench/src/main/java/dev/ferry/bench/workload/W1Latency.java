package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** W1 driver: {@code rpcSync} round-trip latency and idle CPU, 2 worker JVMs ({@link W1Worker}). */
public final class W1Latency {

  private W1Latency() {}

  /** Runs W1 and writes {@code w1_latency.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> params = Map.of(
        "warmup", W1Worker.WARMUP, "calls", W1Worker.CALLS, "idle_s", W1Worker.IDLE.toSeconds());
    return new Driver("w1_latency", params, 2, W1Worker.class, Duration.ofSeconds(180))
        .extract(Driver.mergeRanks(0, 1))
        .run(options);
  }
}
