package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.ReceivedBuffers;
import dev.ferry.rpc.RpcAgent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * W3 worker: worker0 sends a tensor of 1 KiB … 128 MiB to worker1, which echoes it, and times each
 * round trip; the last reply must equal what was sent. Per size it measures two forms one after
 * the other: a direct {@link ByteBuffer} of floats ({@code echoBuffer}; the metrics
 * {@code <size>.median_us}, {@code p90_us}, {@code GB_per_s}: the fastest form a Ferry user can
 * write, sent and received without copies in user space) and a {@code float[]} ({@code echo};
 * {@code <size>.array_median_us}, {@code array_p90_us}, {@code array_GB_per_s}: copied between the
 * heap and direct memory on each side). Buffers of 64 KiB and more travel out of band (Ferry's
 * default {@code outOfBandThreshold}).
 *
 * <p>In the buffer form both sides give received memory back as soon as they are done with it
 * ({@link ReceivedBuffers}), as a careful user's loop would: the callee echoes with {@code
 * echoBufferReleased} (its argument is released once the reply is written), and the caller releases
 * each reply when the next call has returned, between the timed calls (it checks the last one
 * first). Without that, replies over 1 MiB come back only when a garbage collection finds them
 * unreachable, and the transport asks for one every few calls ({@code FERRY_W3_RELEASE=0} measures
 * that, diagnostics only). The array form has nothing to release: its arrays are copies (the memory
 * they were copied from still comes back through the garbage collector).
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

  /**
   * Diagnostics only: FERRY_W3_RELEASE=0 keeps received buffers until the GC finds them unreachable
   * (=caller or =callee: only that side releases).
   */
  private static final String RELEASE_MODE = System.getenv().getOrDefault("FERRY_W3_RELEASE", "1");
  private static final boolean CALLER_RELEASES = RELEASE_MODE.equals("1") || RELEASE_MODE.equals("caller");
  private static final boolean CALLEE_RELEASES = RELEASE_MODE.equals("1") || RELEASE_MODE.equals("callee");

  /** Diagnostics only: FERRY_W3_CALLS_FACTOR=N makes N times the calls (not for reported figures). */
  private static final int CALLS_FACTOR = Integer.parseInt(System.getenv().getOrDefault("FERRY_W3_CALLS_FACTOR", "1"));

  /** Diagnostics only: FERRY_W3_TRACE=1 prints every RTT, and when the timed calls ran (JVM uptime). */
  private static final boolean TRACE = System.getenv("FERRY_W3_TRACE") != null;

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
      // Diagnostics only (not for reported figures): FERRY_W3_SIZES=16MiB,128MiB runs those sizes,
      // FERRY_W3_FORMS=buffer (or array) one form.
      String onlySizes = System.getenv("FERRY_W3_SIZES");
      String forms = System.getenv().getOrDefault("FERRY_W3_FORMS", "buffer,array");
      for (Size size : SIZES) {
        if (onlySizes != null && !List.of(onlySizes.split(",")).contains(size.label())) {
          continue;
        }
        // A size that fails is reported as an error text and the next size still runs: the
        // figures of the sizes that work are worth having (report.py prints the error texts).
        try {
          Map<String, Object> figures = forms.contains("buffer") ? measureBuffer(agent, size, ctx.quick())
              : new LinkedHashMap<>();
          if (forms.contains("array")) {
            measure(agent, size, random, ctx.quick()).forEach((k, v) -> figures.put("array_" + k, v));
          }
          result.put(size.label(), figures);
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

  /** Warm-up then timed echoes of a direct buffer; the last reply must equal the buffer sent. */
  private static Map<String, Object> measureBuffer(RpcAgent agent, Size size, boolean quick) {
    int warm = quick ? 1 : size.warmup() * CALLS_FACTOR;
    int n = quick ? Math.max(3, size.calls() / 10) : size.calls() * CALLS_FACTOR;
    ByteBuffer t = ByteBuffer.allocateDirect(size.bytes()).order(ByteOrder.nativeOrder());
    FloatBuffer floats = t.asFloatBuffer();
    SplittableRandom random = new SplittableRandom(0);
    while (floats.hasRemaining()) {
      floats.put((float) random.nextDouble());
    }
    for (int i = 0; i < warm; i++) {
      release(echo(agent, t));
    }
    long[] lat = new long[n];
    long timedFrom = TRACE ? java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() : 0;
    ByteBuffer back = null;
    for (int i = 0; i < n; i++) {
      release(back); // the previous reply, which this loop is done with (untimed)
      long s = System.nanoTime();
      back = echo(agent, t);
      lat[i] = System.nanoTime() - s;
    }
    if (TRACE) {
      StringBuilder line = new StringBuilder("W3 " + size.label() + " buffer (JVM uptime " + timedFrom + ".."
          + java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() + " ms) RTTs ms:");
      for (long l : lat) {
        line.append(' ').append(l / 100_000 / 10.0);
      }
      System.err.println(line);
    }
    if (back == t || !back.equals(t) || back.order() != t.order()) {
      throw new IllegalStateException(size.label() + ": the reply differs from the buffer sent");
    }
    release(back);
    return summary(size, lat);
  }

  private static ByteBuffer echo(RpcAgent agent, ByteBuffer t) {
    return CALLEE_RELEASES ? agent.rpcSync("worker1", BenchFunctions::echoBufferReleased, t)
        : agent.rpcSync("worker1", BenchFunctions::echoBuffer, t);
  }

  private static void release(ByteBuffer reply) {
    if (CALLER_RELEASES && reply != null) {
      ReceivedBuffers.release(reply);
    }
  }

  private static Map<String, Object> summary(Size size, long[] lat) {
    Map<String, Object> st = Stats.latencySummary(lat, 0);
    double medianUs = (Double) st.get("median_us");
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("median_us", medianUs);
    r.put("p90_us", st.get("p90_us"));
    r.put("GB_per_s", 2.0 * size.bytes() / (medianUs * 1e3));
    return r;
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
    return summary(size, lat);
  }
}
