package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.optim.SGD;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;

/**
 * W5 worker (bench/WORKLOADS.md): a training step with distributed autograd and a {@link
 * DistributedOptimizer}. The MLP 256 → 256 (ReLU) → 10 is split over two workers: worker0, the
 * trainer, holds layer 1 ({@code Linear(256, 256)}) itself; worker1 holds layer 2 ({@code
 * Linear(256, 10)}) as a {@link RemoteModule}. One step, on worker0:
 *
 * <pre>
 * try (DistAutogradContext context = DistAutograd.context(agent)) {
 *   Tensor loss = crossEntropy(layer2.forward(layer1.forward(x).relu()), y); // [64,256] out, [64,10] back
 *   context.backward(List.of(loss));                                        // [64,10] out, [64,256] back
 *   optimizer.step(context.id());                                           // SGD(lr 0.05) on both workers
 * }
 * </pre>
 *
 * <p>x is float32 [64, 256] from {@code randn} (seed 0), y int64 [64] in [0, 10) (seed 0), the
 * same batch every step; 20 warm-up and 300 timed steps, each timed. As a reference, the same
 * model, data and SGD trained in this process with plain autograd.
 */
public final class W5Worker {

  static final int BATCH = 64;
  static final int IN = 256;
  static final int HIDDEN = 256;
  static final int OUT = 10;
  static final int WARMUP = 20;
  static final int STEPS = 300;
  static final double LR = 0.05;

  /**
   * Diagnostics only (not reported): FERRY_W5_EXTRA_STEPS=N runs N more distributed steps after the
   * timed ones and prints their rate and median: the same processes once the JIT has caught up.
   */
  private static final int EXTRA_STEPS = Integer.parseInt(System.getenv().getOrDefault("FERRY_W5_EXTRA_STEPS", "0"));

  private W5Worker() {}

  public static void main(String[] args) {
    WorkerContext.run(args, W5Worker::body);
  }

  /** Layer 2, built on worker1 by the {@link RemoteModule}. */
  public static Linear outputLayer() {
    return new Linear(HIDDEN, OUT);
  }

  private static void body(WorkerContext ctx) {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 3 : WARMUP;
      int steps = ctx.quick() ? 20 : STEPS;
      Generator seed = new Generator(0);
      Tensor x = Tensors.randn(seed, BATCH, IN);
      Tensor y = Tensors.randint(0, OUT, seed, BATCH);
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("dist", distributed(agent, x, y, warm, steps));
      result.put("local", local(x, y, warm, steps));
      ctx.report(result);
    }
    agent.shutdown();
  }

  private static Map<String, Object> distributed(RpcAgent agent, Tensor x, Tensor y, int warm, int steps) {
    Linear layer1 = new Linear(IN, HIDDEN);
    List<RRef<Tensor>> mine = new ArrayList<>();
    try (RemoteModule<Linear> layer2 = RemoteModule.create(agent, "worker1", W5Worker::outputLayer)) {
      for (Tensor p : layer1.parameters()) {
        mine.add(agent.rref(p));
      }
      List<RRef<Tensor>> params = new ArrayList<>(mine);
      params.addAll(layer2.remoteParameters());
      try (DistributedOptimizer optimizer = new DistributedOptimizer(agent, p -> new SGD(p, LR), params)) {
        DoubleSupplier step = () -> {
          try (DistAutogradContext context = DistAutograd.context(agent)) {
            Tensor loss = Functional.crossEntropy(layer2.forward(layer1.forward(x).relu()), y);
            context.backward(List.of(loss));
            optimizer.step(context.id());
            return loss.item();
          }
        };
        Timed timed = Timed.run(step, warm, steps);
        if (EXTRA_STEPS > 0) {
          Map<String, Object> extra = Timed.run(step, 1, EXTRA_STEPS).summary(false);
          System.err.printf("W5 extra steps: %d at %.1f steps/s, median %s ms%n", EXTRA_STEPS,
              extra.get("steps_per_s"), extra.get("step_median_ms"));
        }
        Map<String, Object> out = timed.summary(true);
        out.put("loss_first", timed.first);
        out.put("loss_last", timed.last);
        return out;
      }
    } finally {
      mine.forEach(RRef::close);
    }
  }

  private static Map<String, Object> local(Tensor x, Tensor y, int warm, int steps) {
    Linear layer1 = new Linear(IN, HIDDEN);
    Linear layer2 = new Linear(HIDDEN, OUT);
    List<Tensor> params = new ArrayList<>(layer1.parameters());
    params.addAll(layer2.parameters());
    SGD optimizer = new SGD(params, LR);
    DoubleSupplier step = () -> {
      optimizer.zeroGrad();
      Tensor loss = Functional.crossEntropy(layer2.forward(layer1.forward(x).relu()), y);
      loss.backward();
      optimizer.step();
      return loss.item();
    };
    return Timed.run(step, warm, steps).summary(false);
  }

  /** {@code warm} untimed steps, then {@code steps} steps timed one by one. */
  private record Timed(long[] latencies, long loopNanos, double first, double last) {
    static Timed run(DoubleSupplier step, int warm, int steps) {
      double first = step.getAsDouble();
      for (int i = 1; i < warm; i++) {
        step.getAsDouble();
      }
      long[] lat = new long[steps];
      double last = first;
      long t0 = System.nanoTime();
      for (int i = 0; i < steps; i++) {
        long s = System.nanoTime();
        last = step.getAsDouble();
        lat[i] = System.nanoTime() - s;
      }
      return new Timed(lat, System.nanoTime() - t0, first, last);
    }

    /**
     * {@code steps_per_s}, {@code step_median_ms} and, with {@code p90}, {@code step_p90_ms}, as the
     * PyTorch script names them.
     */
    Map<String, Object> summary(boolean p90) {
      Map<String, Object> s = Stats.latencySummary(latencies, loopNanos);
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("steps_per_s", s.get("calls_per_s"));
      out.put("step_median_ms", ((Number) s.get("median_us")).doubleValue() / 1e3);
      if (p90) {
        out.put("step_p90_ms", ((Number) s.get("p90_us")).doubleValue() / 1e3);
      }
      return out;
    }
  }
}
