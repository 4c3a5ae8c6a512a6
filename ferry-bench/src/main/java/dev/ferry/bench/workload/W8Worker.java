package dev.ferry.bench.workload;

import dev.ferry.bench.harness.Stats;
import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.ReceivedBuffers;
import dev.ferry.rpc.RpcAgent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * W8 worker: while one thread of worker0 echoes a 128 MiB direct buffer off worker1 back to back
 * ({@code echoBufferReleased}, replies released as in W3), another makes small calls
 * {@code noop(1)} to worker1, one at a time, each timed: {@value #WARMUP} warm-up calls and
 * {@value #CALLS} timed ones with {@code rpcSync}, then as many with {@code rpcAsync(...).await()}.
 * The echoes start before the first small call and stop after the last; the last echo must equal
 * what was sent.
 *
 * <p>Metrics per mode ({@code sync}, {@code async}): {@code median_us}, {@code p90_us},
 * {@code p99_us}, {@code max_us} of the small calls; and {@code large.echoes} (echoes completed
 * while the small calls ran) and {@code large.GB_per_s} (their bytes both ways over that time).
 */
public final class W8Worker {

  static final int LARGE_BYTES = 128 << 20;
  static final int WARMUP = 200;
  static final int CALLS = 2_000;

  private W8Worker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W8Worker::body);
  }

  private static void body(WorkerContext ctx) throws Exception {
    RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(120));
    if (ctx.rank() == 0) {
      int warm = ctx.quick() ? 20 : WARMUP;
      int n = ctx.quick() ? 200 : CALLS;
      ByteBuffer large = ByteBuffer.allocateDirect(LARGE_BYTES).order(ByteOrder.nativeOrder());
      SplittableRandom random = new SplittableRandom(0);
      while (large.remaining() >= 8) {
        large.putLong(random.nextLong());
      }
      large.clear();
      ReceivedBuffers.release(agent.rpcSync("worker1", BenchFunctions::echoBufferReleased, large));
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong echoes = new AtomicLong();
      AtomicReference<Throwable> echoFailure = new AtomicReference<>();
      AtomicReference<Boolean> lastEqual = new AtomicReference<>(false);
      Thread echoing = Thread.ofPlatform().name("w8-large").start(() -> {
        try {
          while (!stop.get()) {
            ByteBuffer back = agent.rpcSync("worker1", BenchFunctions::echoBufferReleased, large);
            echoes.incrementAndGet();
            lastEqual.set(back != large && back.equals(large));
            ReceivedBuffers.release(back);
          }
        } catch (Throwable e) {
          echoFailure.set(e);
        }
      });
      Map<String, Object> result = new LinkedHashMap<>();
      long echoesBefore = echoes.get();
      long timedStart = System.nanoTime();
      for (String mode : new String[] {"sync", "async"}) {
        boolean sync = mode.equals("sync");
        for (int i = 0; i < warm; i++) {
          small(agent, sync);
        }
        long[] lat = new long[n];
        for (int i = 0; i < n; i++) {
          long s = System.nanoTime();
          small(agent, sync);
          lat[i] = System.nanoTime() - s;
        }
        Map<String, Object> st = Stats.latencySummary(lat, 0);
        long max = 0;
        for (long l : lat) {
          max = Math.max(max, l);
        }
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("median_us", st.get("median_us"));
        figures.put("p90_us", st.get("p90_us"));
        figures.put("p99_us", st.get("p99_us"));
        figures.put("max_us", max / 1e3);
        result.put(mode, figures);
      }
      long timedNanos = System.nanoTime() - timedStart;
      long during = echoes.get() - echoesBefore;
      stop.set(true);
      echoing.join();
      if (echoFailure.get() != null) {
        throw new IllegalStateException("the 128 MiB echoes failed", echoFailure.get());
      }
      if (!lastEqual.get()) {
        throw new IllegalStateException("the last echo differs from the buffer sent");
      }
      Map<String, Object> largeFigures = new LinkedHashMap<>();
      largeFigures.put("echoes", during);
      largeFigures.put("GB_per_s", 2.0 * LARGE_BYTES * during / timedNanos);
      result.put("large", largeFigures);
      ctx.report(result);
    }
    agent.shutdown();
  }

  private static void small(RpcAgent agent, boolean sync) {
    int back = sync ? agent.rpcSync("worker1", BenchFunctions::noop, 1)
        : agent.<Integer, Integer>rpcAsync("worker1", BenchFunctions::noop, 1).await();
    if (back != 1) {
      throw new IllegalStateException("noop returned " + back);
    }
  }
}
