package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * W4 driver: {@code remote()} + {@code toHere()} latency, and creation throughput with the RRefs
 * dropped so the reference-counting protocol runs, plus memory; 2 worker JVMs ({@link W4Worker}).
 */
public final class W4RRef {

  private W4RRef() {}

  /** Runs W4 and writes {@code w4_rref.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> params = Map.of(
        "warmup", W4Worker.WARMUP, "calls", W4Worker.CALLS, "batches", W4Worker.BATCHES,
        "batch", W4Worker.BATCH, "flat_threshold_mib", W4Worker.FLAT_MIB);
    // A fixed, pre-touched heap: the JVM then does not grow its resident size while it sizes the
    // heap, so RSS growth between batches shows what the RRefs leave behind, as in PyTorch.
    return new Driver("w4_rref", params, 2, W4Worker.class, Duration.ofSeconds(300))
        .jvmArgs(java.util.List.of("-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"))
        .extract(Driver.mergeRanks(0))
        .run(options);
  }
}
