package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W5 driver: a training step with distributed autograd and a distributed optimizer, the MLP split
 * over 2 worker JVMs ({@link W5Worker}), and the same step trained in one process as a reference.
 */
public final class W5DistAutograd {

  private W5DistAutograd() {}

  /** Runs W5 and writes {@code w5_dist_autograd.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("batch", W5Worker.BATCH);
    params.put("in", W5Worker.IN);
    params.put("hidden", W5Worker.HIDDEN);
    params.put("out", W5Worker.OUT);
    params.put("warmup", W5Worker.WARMUP);
    params.put("steps", W5Worker.STEPS);
    params.put("lr", W5Worker.LR);
    params.put("optimizer", "SGD");
    return new Driver("w5_dist_autograd", params, 2, W5Worker.class, Duration.ofSeconds(300))
        .extract(Driver.mergeRanks(0))
        .run(options);
  }
}
