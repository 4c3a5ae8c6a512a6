package dev.ferry.bench.workload;

import com.sun.management.OperatingSystemMXBean;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.util.Optional;

/**
 * CPU time of this whole process in nanoseconds, as exact as Python's {@code time.process_time()}
 * (both read {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)}), so that W1's idle probe compares
 * like with like. The JDK's {@code OperatingSystemMXBean.getProcessCpuTime()} counts in clock
 * ticks ({@code times()}: 10 ms here), which over W1's 2 s window quantises the figure to 0.5 %
 * steps.
 *
 * <p>The call goes through the Foreign Function API; off Linux, or where the JVM refuses the native
 * call, the tick-based figure is used and {@link #exact()} says so.
 */
final class ProcessCpuClock {
  private static final int CLOCK_PROCESS_CPUTIME_ID = 2; // Linux
  private static final Native NATIVE = Native.find().orElse(null);

  private ProcessCpuClock() {}

  /** Whether {@link #nanos()} is exact (else it counts clock ticks). */
  static boolean exact() {
    return NATIVE != null;
  }

  /** CPU time used so far by all threads of this process. */
  static long nanos() {
    if (NATIVE != null) {
      try {
        return NATIVE.processCpuNanos();
      } catch (Throwable e) {
        // fall through to the tick-based clock
      }
    }
    return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** {@code clock_gettime} and the {@code struct timespec} it fills. */
  private record Native(MethodHandle clockGettime, MemorySegment timespec) {

    long processCpuNanos() throws Throwable {
      int rc = (int) clockGettime.invokeExact(CLOCK_PROCESS_CPUTIME_ID, timespec);
      if (rc != 0) {
        throw new IllegalStateException("clock_gettime returned " + rc);
      }
      long seconds = timespec.get(ValueLayout.JAVA_LONG, 0);
      long nanos = timespec.get(ValueLayout.JAVA_LONG, 8);
      return seconds * 1_000_000_000L + nanos;
    }

    static Optional<Native> find() {
      if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
        return Optional.empty();
      }
      try {
        Linker linker = Linker.nativeLinker();
        Optional<MemorySegment> symbol = linker.defaultLookup().find("clock_gettime");
        if (symbol.isEmpty()) {
          return Optional.empty();
        }
        MethodHandle call = linker.downcallHandle(symbol.get(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        Native clock = new Native(call, Arena.global().allocate(16));
        clock.processCpuNanos(); // fails here, not in the measurement, if something is off
        return Optional.of(clock);
      } catch (Throwable e) {
        return Optional.empty();
      }
    }
  }
}
