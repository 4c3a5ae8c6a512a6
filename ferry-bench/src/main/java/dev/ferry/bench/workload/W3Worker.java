package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * W3 worker: worker0 sends a {@code float[]} of 1 KiB … 128 MiB to {@code echo} on worker1 and
 * times each round trip; the last reply must equal the array sent. Arrays of 64 KiB and more
 * travel out of band (Ferry's default {@code outOfBandThreshold}).
 */
public final class W3Worker {

  /** One tensor size: its label, its size in bytes, warm-up and timed calls. */
  record Size(String label, int bytes, int warmup, int calls) {}

  static final int KIB = 1024;
  static final int MIB = 1024 * 1024;
  static final List<Size> SIZES = List.of(
      new Size("1KiB", KIB, 200, 2_000),
      new Size("64KiB", 64 * KIB, 100, 1_000),
      new Size("1MiB", MIB, 20, 300),
      new Size("16MiB", 16 * MIB, 3, 40),
      new Size("128MiB", 128 * MIB, 2, 10));

  private W3Worker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W3Worker::body);
  }

  private static void body(WorkerContext ctx) {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(120));
    if (ctx.rank() == 0) {
      Map<String, Object> result = new LinkedHashMap<>();
      SplittableRandom random = new SplittableRandom(0);
      Map<String, Integer> errors = new LinkedHashMap<>();
      for (Size size : SIZES) {
        // A size that fails is reported as an error text and the next size still runs: the
        // figures of the sizes that work are worth having (report.py prints the error texts).
        try {
          result.put(size.label(), measure(agent, size, random, ctx.quick()));
        } catch (RuntimeException e) {
          String first = e.toString().lines().findFirst().orElse("");
          errors.merge(size.label() + ": " + (first.length() > 300 ? first.substring(0, 300) : first), 1, Integer::sum);
          System.err.println("W3 " + size.label() + " failed: " + e);
        }
      }
      result.put("error_texts", errors);
      ctx.report(result);
    }
    agent.shutdown();
  }

  /** Warm-up then timed echoes of one size; the last reply must equal the array sent. */
  private static Map<String, Object> measure(RpcAgent agent, Size size, SplittableRandom random, boolean quick) {
    int warm = quick ? 1 : size.warmup();
    int n = quick ? Math.max(3, size.calls() / 10) : size.calls();
    float[] t = new float[size.bytes() / Float.BYTES];
    for (int i = 0; i < t.length; i++) {
      t[i] = (float) random.nextDouble();
    }
    for (int i = 0; i < warm; i++) {
      agent.rpcSync("worker1", BenchFunctions::echo, t);
    }
    long[] lat = new long[n];
    float[] back = null;
    for (int i = 0; i < n; i++) {
      long s = System.nanoTime();
      back = agent.rpcSync("worker1", BenchFunctions::echo, t);
      lat[i] = System.nanoTime() - s;
    }
    if (back == t || !Arrays.equals(back, t)) {
      throw new IllegalStateException(size.label() + ": the reply differs from the array sent");
    }
    Map<String, Object> st = Stats.latencySummary(lat, 0);
    double medianUs = (Double) st.get("median_us");
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("median_us", medianUs);
    r.put("p90_us", st.get("p90_us"));
    r.put("GB_per_s", 2.0 * size.bytes() / (medianUs * 1e3));
    return r;
  }
}
