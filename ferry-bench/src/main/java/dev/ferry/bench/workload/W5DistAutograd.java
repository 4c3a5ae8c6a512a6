package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W5 driver: a training step with distributed autograd and a distributed optimizer, the MLP split
 * over 2 worker JVMs ({@link W5Worker}), and the same step trained in one process as a reference;
 * and W5's variants (more steps, a compute-heavy model).
 */
public final class W5DistAutograd {

  private W5DistAutograd() {}

  /** Runs W5 and writes {@code w5_dist_autograd.json}. */
  public static Path run(BenchOptions options) throws Exception {
    return run(options, W5Worker.Variant.W5);
  }

  /** Runs W5 or a variant and writes its result file ({@code w5_long.json}, {@code w5_heavy.json}). */
  public static Path run(BenchOptions options, W5Worker.Variant variant) throws Exception {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("variant", variant.name());
    params.put("batch", variant.batch);
    params.put("sizes", java.util.Arrays.stream(variant.sizes).boxed().toList());
    params.put("warmup", variant.warmup);
    params.put("steps", variant.steps);
    params.put("lr", W5Worker.LR);
    params.put("optimizer", "SGD");
    return new Driver(variant.resultName, params, 2, W5Worker.class, Duration.ofSeconds(900))
        .extract(Driver.mergeRanks(0))
        .run(options);
  }
}
