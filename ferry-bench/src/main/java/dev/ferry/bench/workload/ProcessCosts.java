package dev.ferry.bench.workload;

import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What this process has spent so far, for diagnostics beside the wall-clock figures (W5): its CPU
 * time, the time its JIT compilers have taken, and the CPU time of each group of its threads. CPU
 * and compile times are far less sensitive to other load on the machine than wall-clock ones, so
 * an A/B made while the machine is busy can read them.
 *
 * <p>Take one snapshot before and one after the phase of interest and {@link #minus subtract}.
 * Snapshots are immutable; {@link #now} reads {@code /proc/self/task} (Linux; elsewhere the thread
 * groups are empty).
 *
 * @param uptimeMillis the JVM's uptime (a snapshot's; a difference's is the phase's wall time),
 *     the time stamps of {@code -Xlog} and {@code -XX:+PrintCompilation}
 * @param processNanos CPU time of all threads of the process ({@link ProcessCpuClock})
 * @param jitNanos time spent compiling, all compiler threads together, including those the JVM
 *     has stopped since ({@code CompilationMXBean.getTotalCompilationTime}, in ms steps)
 * @param allocatedBytes bytes allocated on the heap by all threads, including those that have
 *     exited ({@code com.sun.management.ThreadMXBean.getTotalThreadAllocatedBytes})
 * @param threadNanos CPU time by thread group: the thread's name without its trailing number
 *     ({@code "C2 CompilerThre"}, {@code "ferry-request-w"}: Linux keeps 15 characters of a name),
 *     in clock ticks of 10 ms; threads that have exited no longer count
 */
record ProcessCosts(long uptimeMillis, long processNanos, long jitNanos, long allocatedBytes, Map<String, Long> threadNanos) {
  private static final long NANOS_PER_TICK = 10_000_000L; // USER_HZ is 100 on Linux
  private static final int UTIME = 11; // fields of /proc/<pid>/task/<tid>/stat after "(name) "
  private static final int STIME = 12;

  ProcessCosts {
    threadNanos = Map.copyOf(threadNanos);
  }

  /** Nothing spent: the snapshot of a phase that is not measured. */
  static ProcessCosts none() {
    return new ProcessCosts(0, 0, 0, 0, Map.of());
  }

  /** This process, now. */
  static ProcessCosts now() {
    long jitMillis = ManagementFactory.getCompilationMXBean().getTotalCompilationTime();
    long allocated = ((ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
    return new ProcessCosts(ManagementFactory.getRuntimeMXBean().getUptime(), ProcessCpuClock.nanos(), jitMillis * 1_000_000L, allocated, threadGroups());
  }

  /** What was spent between {@code before} and this snapshot. */
  ProcessCosts minus(ProcessCosts before) {
    Map<String, Long> threads = new TreeMap<>();
    threadNanos.forEach((group, nanos) -> threads.put(group, nanos - before.threadNanos.getOrDefault(group, 0L)));
    return new ProcessCosts(uptimeMillis - before.uptimeMillis, processNanos - before.processNanos, jitNanos - before.jitNanos,
        allocatedBytes - before.allocatedBytes, threads);
  }

  /** {@code cpu_ms_per_step}, {@code jit_ms_per_step} and {@code alloc_kib_per_step}, each with {@code suffix}. */
  Map<String, Object> perStep(int steps, String suffix) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("cpu_ms_per_step" + suffix, processNanos / 1e6 / steps);
    out.put("jit_ms_per_step" + suffix, jitNanos / 1e6 / steps);
    out.put("alloc_kib_per_step" + suffix, allocatedBytes / 1024.0 / steps);
    return out;
  }

  /** The thread groups that used CPU, most first, in ms per step: one line for a log. */
  String threadsPerStep(int steps) {
    StringBuilder line = new StringBuilder();
    threadNanos.entrySet().stream()
        .filter(e -> e.getValue() > 0)
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .forEach(e -> line.append(String.format(Locale.ROOT, "%s %.3f; ", e.getKey(), e.getValue() / 1e6 / steps)));
    return line.toString().strip();
  }

  private static Map<String, Long> threadGroups() {
    Map<String, Long> groups = new TreeMap<>();
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return groups;
    }
    try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
      for (Path thread : threads) {
        String stat;
        try {
          stat = Files.readString(thread.resolve("stat"));
        } catch (IOException exited) {
          continue; // the thread ended while we listed them
        }
        int close = stat.lastIndexOf(')');
        String name = stat.substring(stat.indexOf('(') + 1, close).replaceFirst("[0-9]+$", "");
        String[] fields = stat.substring(close + 2).split(" ");
        long ticks = Long.parseLong(fields[UTIME]) + Long.parseLong(fields[STIME]);
        groups.merge(name, ticks * NANOS_PER_TICK, Long::sum);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + tasks, e);
    }
    return groups;
  }
}
