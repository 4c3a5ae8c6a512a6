package dev.ferry.bench.workload;

import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.ReceivedBuffers;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcFuture;

/**
 * The functions the workloads call remotely (bench/pytorch/rpcfuncs.py). They are static methods
 * of a class on every worker's class path, so caller and callee resolve them by the same name.
 */
public final class BenchFunctions {

  private BenchFunctions() {}

  /** W1, W2, W7 callee: returns its argument unchanged. */
  public static int noop(int x) {
    return x;
  }

  /**
   * W1's second idle probe, run on worker1 while worker0 waits for it: this process's CPU while
   * the calling thread sleeps {@code millis}, in percent of one core (see {@link Timing}).
   */
  public static double idleCpuPercent(int millis) throws InterruptedException {
    return Timing.idleCpuPercent(java.time.Duration.ofMillis(millis));
  }

  /**
   * W2's cost probe, run on both workers before and after each timed window: this process's CPU
   * time ({@link ProcessCpuClock}, ns) and the bytes all its threads have allocated so far, so that
   * W2 reports what a call costs both workers, figures that a busy machine hardly moves.
   */
  public static long[] processCounters() {
    var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    return new long[] {ProcessCpuClock.nanos(), threads.getTotalThreadAllocatedBytes()};
  }

  /** W3 callee: returns the array it received (a copy decoded on this worker, sent back). */
  public static float[] echo(float[] t) {
    return t;
  }

  /**
   * W3 callee, buffer form: returns the buffer it received. A large direct buffer arrives as a view
   * of the memory the transport received it into, and goes back out from there without a copy.
   */
  public static java.nio.ByteBuffer echoBuffer(java.nio.ByteBuffer t) {
    return t;
  }

  /**
   * W3 callee, buffer form as measured: {@link #echoBuffer} that also gives the received memory
   * back once the reply is written ({@link ReceivedBuffers#releaseAfterSend}), as a careful user's
   * echo would, so the transport never has to ask for a garbage collection to reuse it.
   */
  public static java.nio.ByteBuffer echoBufferReleased(java.nio.ByteBuffer t) {
    return ReceivedBuffers.releaseAfterSend(t);
  }

  /**
   * W7 middle hop: a blocking call to the next worker from inside a call, holding this worker's
   * request thread while it waits.
   */
  public static int relay(String to, int x) {
    return Rpc.rpcSync(to, BenchFunctions::noop, x);
  }

  /** W7c middle hop: returns the nested call's future, so no thread waits for it. */
  @AsyncExecution
  public static RpcFuture<Integer> asyncRelay(String to, int x) {
    return Rpc.rpcAsync(to, BenchFunctions::noop, x);
  }

  /**
   * W4 drain probe, run on the owner: its RRef counters and its resident memory (VmRSS, MiB).
   */
  public static java.util.Map<String, Double> rrefDebug() {
    java.util.Map<String, String> info = Rpc.current().getDebugInfo();
    return java.util.Map.of(
        "num_owner_rrefs", Double.parseDouble(info.get("rref.num_owner_rrefs")),
        "rss_mib", Timing.rssMib());
  }

  /** W5's diagnostics: what worker1's process has spent so far ({@link ProcessCosts#now}). */
  public static ProcessCosts processCosts() {
    return ProcessCosts.now();
  }
}
