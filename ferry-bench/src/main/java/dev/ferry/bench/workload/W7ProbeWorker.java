package dev.ferry.bench.workload;

import dev.ferry.bench.harness.WorkerContext;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * W7b/W7c worker (the thread-exhaustion probe): every worker has 4 request threads and a 10 s
 * call timeout; worker0 issues 32 {@code rpcAsync("worker1", relay, "worker2", i)} back to back
 * ({@code asyncRelay} for W7c), waits for each in order, then checks 5 s later that worker1 still
 * answers a plain call within 3 s. Every rank then shuts down gracefully on a daemon thread and
 * reports whether that finished within its window (1), failed (−1) or was still stuck (0); a
 * stuck rank halts. Each rank reports once before shutting down, since a deadlocked shutdown may
 * never return, and once after.
 */
public final class W7ProbeWorker {

  static final int CALLS = 32;
  static final int THREADS = 4;
  static final Duration TIMEOUT = Duration.ofSeconds(10);
  static final Duration RESPONSIVE_DELAY = Duration.ofSeconds(5);
  static final Duration RESPONSIVE_TIMEOUT = Duration.ofSeconds(3);
  static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(20);
  // Ranks 1 and 2 start shutdown right after init, rank 0 only after the probe: their window
  // also covers the probe, so that every rank's window covers rank 0's 20 s (as in w7_nested.py).
  static final Duration OTHERS_SHUTDOWN_WAIT =
      SHUTDOWN_WAIT.plus(TIMEOUT).plus(RESPONSIVE_DELAY).plus(RESPONSIVE_TIMEOUT).plusSeconds(5);

  private W7ProbeWorker() {}

  /** Worker entry point, started once per rank by the driver (see {@link WorkerContext}). */
  public static void main(String[] args) {
    WorkerContext.run(args, W7ProbeWorker::body);
  }

  private static void body(WorkerContext ctx) throws InterruptedException {
    RpcAgent agent = ctx.startAgent(THREADS, TIMEOUT);
    Map<String, Object> result = new LinkedHashMap<>();
    Map<String, Integer> errors = new LinkedHashMap<>();
    if (ctx.rank() == 0) {
      boolean async = "async".equals(ctx.string("variant"));
      long t0 = System.nanoTime();
      List<RpcFuture<Integer>> futures = new ArrayList<>(CALLS);
      for (int i = 0; i < CALLS; i++) {
        futures.add(async
            ? flatten(agent.rpcAsync("worker1", BenchFunctions::asyncRelay, "worker2", i))
            : agent.rpcAsync("worker1", BenchFunctions::relay, "worker2", i));
      }
      int ok = 0;
      for (int i = 0; i < CALLS; i++) {
        try {
          int v = futures.get(i).await();
          if (v != i) {
            throw new IllegalStateException("call " + i + " returned " + v);
          }
          ok++;
        } catch (RuntimeException e) {
          errors.merge(firstLine(e), 1, Integer::sum);
        }
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      Thread.sleep(RESPONSIVE_DELAY);
      int responsive;
      try {
        agent.to("worker1").withTimeout(RESPONSIVE_TIMEOUT).rpcSync(BenchFunctions::noop, 1);
        responsive = 1;
      } catch (RuntimeException e) {
        errors.merge("responsiveness probe: " + firstLine(e), 1, Integer::sum);
        responsive = 0;
      }
      result.put("completed", ok);
      result.put("failed", CALLS - ok);
      result.put("seconds_to_resolve_all", seconds);
      result.put("worker1_responsive_after", responsive);
    }
    result.put("error_texts", errors);
    result.put("phase", "before_shutdown");
    ctx.report(result);
    Duration wait = ctx.rank() == 0 ? SHUTDOWN_WAIT : OTHERS_SHUTDOWN_WAIT;
    AtomicReference<String> failure = new AtomicReference<>();
    int finished = boundedShutdown(agent, wait, failure);
    if (failure.get() != null) {
      errors.put("rank" + ctx.rank() + " shutdown: " + failure.get(), 1);
    }
    result.put("phase", "after_shutdown");
    result.put("shutdown_finished", finished);
    ctx.report(result);
  }

  /**
   * The caller's view of an {@code @AsyncExecution} call: the callee replies with the value of
   * the future its function returned, so the future holds an {@code Integer}, although the typed
   * API, which derives the result type from the function, declares a future of a future.
   */
  @SuppressWarnings("unchecked")
  private static RpcFuture<Integer> flatten(RpcFuture<RpcFuture<Integer>> future) {
    return (RpcFuture<Integer>) (RpcFuture<?>) future;
  }

  /** Graceful shutdown on a daemon thread: 1 finished, −1 threw, 0 still running after {@code wait}. */
  private static int boundedShutdown(RpcAgent agent, Duration wait, AtomicReference<String> failure)
      throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    Thread t = new Thread(() -> {
      try {
        agent.shutdown();
      } catch (RuntimeException e) {
        failure.set(firstLine(e));
      } finally {
        done.countDown();
      }
    }, "bench-shutdown");
    t.setDaemon(true);
    t.start();
    if (!done.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
      return 0;
    }
    return failure.get() == null ? 1 : -1;
  }

  private static String firstLine(Throwable e) {
    String s = e.toString().strip();
    int nl = s.indexOf('\n');
    s = nl < 0 ? s : s.substring(0, nl);
    return s.length() > 160 ? s.substring(0, 160) : s;
  }
}
