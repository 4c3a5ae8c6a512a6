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
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.nn.ReLU;
import dev.ferry.tensor.nn.Sequential;
import dev.ferry.tensor.optim.SGD;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * W5 worker (bench/WORKLOADS.md): a training step with distributed autograd and a {@link
 * DistributedOptimizer}. The MLP 256 → 256 (ReLU) → 10 is split over two workers: worker0, the
 * trainer, holds layer 1 ({@code Linear(256, 256)}) itself; worker1 holds layer 2 ({@code
 * Linear(256, 10)}) as a {@link RemoteModule}. Its variants ({@link Variant}, ferry-bench/README)
 * change the counts or the sizes: every layer but the last is worker0's. One step, on worker0:
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

  static final double LR = 0.05;

  /**
   * W5 as defined, and its variants: {@code long} (3,000 timed steps), {@code heavy} (1024 → 1024
   * → 1024 → 10, batch 256: the matrix products dominate).
   *
   * @param sizes layer widths, from the input to the output; the last layer is worker1's
   */
  public enum Variant {
    W5("w5_dist_autograd", 64, new int[] {256, 256, 10}, 20, 300),
    LONG("w5_long", 64, new int[] {256, 256, 10}, 20, 3000),
    HEAVY("w5_heavy", 256, new int[] {1024, 1024, 1024, 10}, 20, 300);

    final String resultName;
    final int batch;
    final int[] sizes;
    final int warmup;
    final int steps;

    Variant(String resultName, int batch, int[] sizes, int warmup, int steps) {
      this.resultName = resultName;
      this.batch = batch;
      this.sizes = sizes;
      this.warmup = warmup;
      this.steps = steps;
    }

    int in() {
      return sizes[0];
    }

    int out() {
      return sizes[sizes.length - 1];
    }
  }

  /**
   * Diagnostics only (not reported): FERRY_W5_EXTRA_STEPS=N runs N more distributed steps after the
   * timed ones and prints their rate and median: the same processes once the JIT has caught up.
   */
  private static final int EXTRA_STEPS = Integer.parseInt(System.getenv().getOrDefault("FERRY_W5_EXTRA_STEPS", "0"));

  private W5Worker() {}

  public static void main(String[] args) {
    WorkerContext.run(args, W5Worker::body);
  }

  /** The local layers: Linear and ReLU for each width but the last two. */
  static Sequential hiddenLayers(int[] sizes) {
    List<Module> layers = new ArrayList<>();
    for (int i = 0; i + 2 < sizes.length; i++) {
      layers.add(new Linear(sizes[i], sizes[i + 1]));
      layers.add(new ReLU());
    }
    return new Sequential(layers.toArray(Module[]::new));
  }

  private static void body(WorkerContext ctx) {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
    if (ctx.rank() == 0) {
      Variant variant = Variant.valueOf(ctx.string("variant"));
      int warm = ctx.quick() ? 3 : variant.warmup;
      int steps = ctx.quick() ? 20 : variant.steps;
      Generator seed = new Generator(0);
      Tensor x = Tensors.randn(seed, variant.batch, variant.in());
      Tensor y = Tensors.randint(0, variant.out(), seed, variant.batch);
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("dist", distributed(agent, variant.sizes, x, y, warm, steps));
      result.put("local", local(variant.sizes, x, y, warm, steps));
      result.put("blas", Tensors.blasBackend()); // JNIBLAS: the system's libblas.so.3 (OpenBLAS when installed)
      ctx.report(result);
    }
    agent.shutdown();
  }

  private static Map<String, Object> distributed(RpcAgent agent, int[] sizes, Tensor x, Tensor y, int warm,
      int steps) {
    Sequential layer1 = hiddenLayers(sizes);
    int width = sizes[sizes.length - 2];
    int classes = sizes[sizes.length - 1];
    List<RRef<Tensor>> mine = new ArrayList<>();
    try (RemoteModule<Linear> layer2 = RemoteModule.create(agent, "worker1", () -> new Linear(width, classes))) {
      for (Tensor p : layer1.parameters()) {
        mine.add(agent.rref(p));
      }
      List<RRef<Tensor>> params = new ArrayList<>(mine);
      params.addAll(layer2.remoteParameters());
      try (DistributedOptimizer optimizer = new DistributedOptimizer(agent, p -> new SGD(p, LR), params)) {
        DoubleSupplier step = () -> {
          try (DistAutogradContext context = DistAutograd.context(agent)) {
            Tensor loss = Functional.crossEntropy(layer2.forward(layer1.forward(x)), y);
            context.backward(List.of(loss));
            optimizer.step(context.id());
            return loss.item();
          }
        };
        Timed timed = Timed.run(step, warm, steps, () -> Cost.of(agent));
        if (EXTRA_STEPS > 0) {
          Map<String, Object> extra = Timed.run(step, 1, EXTRA_STEPS, Cost::none).summary(false);
          System.err.printf("W5 extra steps: %d at %.1f steps/s, median %s ms%n", EXTRA_STEPS,
              extra.get("steps_per_s"), extra.get("step_median_ms"));
        }
        Map<String, Object> out = timed.summary(true);
        out.put("loss_first", timed.first);
        out.put("loss_last", timed.last);
        timed.after.putSince(timed.before, steps, out);
        return out;
      }
    } finally {
      mine.forEach(RRef::close);
    }
  }

  private static Map<String, Object> local(int[] sizes, Tensor x, Tensor y, int warm, int steps) {
    Sequential layer1 = hiddenLayers(sizes);
    Linear layer2 = new Linear(sizes[sizes.length - 2], sizes[sizes.length - 1]);
    List<Tensor> params = new ArrayList<>(layer1.parameters());
    params.addAll(layer2.parameters());
    SGD optimizer = new SGD(params, LR);
    DoubleSupplier step = () -> {
      optimizer.zeroGrad();
      Tensor loss = Functional.crossEntropy(layer2.forward(layer1.forward(x)), y);
      loss.backward();
      optimizer.step();
      return loss.item();
    };
    return Timed.run(step, warm, steps, Cost::none).summary(false);
  }

  /**
   * Diagnostics beside the timed figures (ferry-bench/README, "W5 variants"): what both workers'
   * processes spent during the timed steps ({@link ProcessCosts}), per step; which of their
   * threads used the CPU goes to stderr.
   */
  record Cost(ProcessCosts rank0, ProcessCosts rank1) {
    static Cost none() {
      return new Cost(ProcessCosts.none(), ProcessCosts.none());
    }

    /** Now, on both workers (worker1's through a call, outside the timed interval). */
    static Cost of(RpcAgent agent) {
      ProcessCosts remote = agent.rpcSync("worker1", BenchFunctions::processCosts);
      return new Cost(ProcessCosts.now(), remote);
    }

    /**
     * Puts what was spent from {@code before} to this snapshot, per step, into {@code out}; prints
     * when that was (each JVM's uptime, as {@code -Xlog} stamps its lines) and the threads' shares.
     */
    void putSince(Cost before, int steps, Map<String, Object> out) {
      putSince("rank0", before.rank0, rank0, steps, out);
      putSince("rank1", before.rank1, rank1, steps, out);
    }

    private static void putSince(String rank, ProcessCosts from, ProcessCosts to, int steps, Map<String, Object> out) {
      ProcessCosts spent = to.minus(from);
      out.putAll(spent.perStep(steps, "_" + rank));
      System.err.printf(Locale.ROOT, "W5 timed steps on %s: uptime %d .. %d ms; CPU ms per step by thread: %s%n",
          rank, from.uptimeMillis(), to.uptimeMillis(), spent.threadsPerStep(steps));
    }
  }

  /** {@code warm} untimed steps, then {@code steps} steps timed one by one, and what they cost. */
  private record Timed(long[] latencies, long loopNanos, double first, double last, Cost before, Cost after) {
    static Timed run(DoubleSupplier step, int warm, int steps, Supplier<Cost> costNow) {
      double first = step.getAsDouble();
      for (int i = 1; i < warm; i++) {
        step.getAsDouble();
      }
      long[] lat = new long[steps];
      double last = first;
      Cost before = costNow.get();
      long t0 = System.nanoTime();
      for (int i = 0; i < steps; i++) {
        long s = System.nanoTime();
        last = step.getAsDouble();
        lat[i] = System.nanoTime() - s;
      }
      long loop = System.nanoTime() - t0;
      return new Timed(lat, loop, first, last, before, costNow.get());
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
