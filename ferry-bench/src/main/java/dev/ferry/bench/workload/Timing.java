package dev.ferry.bench.workload;

import java.time.Duration;

/** Clock helpers of the workers. */
final class Timing {

  private Timing() {}

  /**
   * CPU used by this whole process (all threads: agent, transport, JIT, GC) while the calling
   * thread sleeps {@code idle}, as a percentage of one core: W1's idle probe, the counterpart of
   * Python's {@code time.process_time()} over a sleep (the same clock: {@link ProcessCpuClock}).
   */
  static double idleCpuPercent(Duration idle) throws InterruptedException {
    long cpu0 = ProcessCpuClock.nanos();
    long wall0 = System.nanoTime();
    Thread.sleep(idle);
    long cpu = ProcessCpuClock.nanos() - cpu0;
    long wall = System.nanoTime() - wall0;
    return 100.0 * cpu / wall;
  }

  /** This process's resident memory (VmRSS of /proc/self/status) in MiB; -1 where unavailable. */
  static double rssMib() {
    try {
      for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    } catch (java.io.IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }
}
