package dev.ferry.bench.workload;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;

/** Clock helpers of the workers. */
final class Timing {

  private Timing() {}

  /**
   * CPU used by this whole process (all threads: agent, transport, JIT, GC) while the calling
   * thread sleeps {@code idle}, as a percentage of one core: W1's idle probe, the counterpart of
   * Python's {@code time.process_time()} over a sleep.
   */
  static double idleCpuPercent(Duration idle) throws InterruptedException {
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long wall0 = System.nanoTime();
    Thread.sleep(idle);
    long cpu = os.getProcessCpuTime() - cpu0;
    long wall = System.nanoTime() - wall0;
    return 100.0 * cpu / wall;
  }
}
