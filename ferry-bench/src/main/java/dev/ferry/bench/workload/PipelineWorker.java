package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.examples.PipelineParallelTraining;
import dev.ferry.examples.PipelineParallelTraining.Batch;
import dev.ferry.examples.PipelineParallelTraining.Mode;
import dev.ferry.examples.PipelineParallelTraining.Trainer;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.tensor.Generator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pipeline workload worker (ferry-bench/README, "Pipeline"): tutorial 4's model
 * ({@link PipelineParallelTraining}, two shards on worker1 and worker2, driven by worker0) trained
 * in four configurations, each with its own model in the same processes: the tutorial's way with 1
 * micro-batch (no pipelining) and with 4, and through a {@code Pipeline} with GPipe and with 1F1B at
 * 4 micro-batches. The configurations run in an order rotated by the run's index, so that none is
 * always the first a fresh process runs. Each: {@link #WARMUP} untimed steps, then {@link #STEPS}
 * steps timed one by one, on batches drawn beforehand.
 */
public final class PipelineWorker {
  static final int WARMUP = 10;
  static final int STEPS = 40;

  /** The configurations: a name for the metrics, the mode, the micro-batch count. */
  record Config(String name, Mode mode, int microBatches) {}

  static final List<Config> CONFIGS = List.of(
      new Config("tutorial_1", Mode.TUTORIAL, 1),
      new Config("tutorial_4", Mode.TUTORIAL, 4),
      new Config("gpipe_4", Mode.GPIPE, 4),
      new Config("1f1b_4", Mode.ONE_F_ONE_B, 4));

  private PipelineWorker() {}

  public static void main(String[] args) {
    WorkerContext.run(args, PipelineWorker::body);
  }

  private static void body(WorkerContext ctx) {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 1 : WARMUP;
      int steps = ctx.quick() ? 3 : STEPS;
      int repeat = Integer.parseInt(ctx.string("repeat"));
      Generator data = new Generator(0);
      List<Batch> batches = new ArrayList<>();
      for (int i = 0; i < warm + steps; i++) {
        batches.add(Batch.draw(data, PipelineParallelTraining.BATCH));
      }
      Map<String, Object> result = new LinkedHashMap<>();
      for (int k = 0; k < CONFIGS.size(); k++) {
        Config config = CONFIGS.get((k + repeat) % CONFIGS.size());
        result.put(config.name(), run(agent, config, batches, warm, steps));
      }
      ctx.report(result);
    }
    agent.shutdown();
  }

  private static Map<String, Object> run(RpcAgent agent, Config config, List<Batch> batches, int warm, int steps) {
    try (Trainer trainer = new Trainer(agent, config.mode(), config.microBatches())) {
      for (int i = 0; i < warm; i++) {
        trainer.step(batches.get(i).x(), batches.get(i).y());
      }
      long[] latencies = new long[steps];
      double last = Double.NaN;
      long t0 = System.nanoTime();
      for (int i = 0; i < steps; i++) {
        Batch batch = batches.get(warm + i);
        long s = System.nanoTime();
        last = trainer.step(batch.x(), batch.y());
        latencies[i] = System.nanoTime() - s;
      }
      Map<String, Object> summary = Stats.latencySummary(latencies, System.nanoTime() - t0);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("steps_per_s", summary.get("calls_per_s"));
      out.put("step_median_ms", ((Number) summary.get("median_us")).doubleValue() / 1e3);
      List<Integer> peaks = trainer.peakActivations();
      for (int s = 0; s < peaks.size(); s++) {
        out.put("peak_activations_stage" + s, peaks.get(s));
      }
      out.put("loss_last", last);
      return out;
    }
  }
}
