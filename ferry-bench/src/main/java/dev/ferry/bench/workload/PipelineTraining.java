package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.Driver;
import dev.ferry.examples.PipelineParallelTraining;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The pipeline workload's driver (ferry-bench/README, "Pipeline"): tutorial 4's model on 3 worker
 * JVMs, in the four configurations of {@link PipelineWorker}.
 */
public final class PipelineTraining {

  private PipelineTraining() {}

  /** Runs the workload and writes {@code pipeline_training.json}. */
  public static Path run(BenchOptions options) throws Exception {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("model", "PipelineParallelTraining: 64 -> 256 -> 256 | 256 -> 256 -> 10, two shards");
    params.put("batch", PipelineParallelTraining.BATCH);
    params.put("configs", PipelineWorker.CONFIGS.stream().map(PipelineWorker.Config::name).toList());
    params.put("warmup", PipelineWorker.WARMUP);
    params.put("steps", PipelineWorker.STEPS);
    params.put("optimizer", "Adam");
    return new Driver("pipeline_training", params, 3, PipelineWorker.class, Duration.ofSeconds(300))
        .extract(Driver.mergeRanks(0))
        .run(options);
  }
}
