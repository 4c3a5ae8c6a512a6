package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** W2 driver: {@code rpcAsync} throughput with windows of 1, 8, 64, 256 ({@link W2Worker}). */
public final class W2AsyncThroughput {

  private W2AsyncThroughput() {}

  /** Runs W2 and writes {@code w2_async_throughput.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> params = Map.of(
        "windows", W2Worker.WINDOWS, "warmup", W2Worker.WARMUP, "calls", W2Worker.CALLS);
    return new Driver("w2_async_throughput", params, 2, W2Worker.class, Duration.ofSeconds(240)).run(options);
  }
}
