package dev.ferry.bench.workload;

import com.sun.management.OperatingSystemMXBean;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.Optional;

/**
 * CPU time of this whole process in nanoseconds, as exact as Python's {@code time.process_time()}
 * (both read {@code clock_gettime(CLOCK_PROCESS_CPUTIME_ID)}), so that W1's idle probe compares
 * like with like. The JDK's {@code OperatingSystemMXBean.getProcessCpuTime()} counts in clock
 * ticks ({@code times()}: 10 ms here), which over W1's 2 s window quantises the figure to 0.5 %
 * steps.
 *
 * <p>The call goes through the Foreign Function API, looked up at run time because it is final
 * only from Java 22 and Ferry compiles for 21; without it (or off Linux) the tick-based figure is
 * used and {@link #exact()} says so.
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

  /** {@code clock_gettime} through {@code java.lang.foreign}, bound reflectively. */
  private record Native(MethodHandle clockGettime, Object timespec, MethodHandle getLong) {

    long processCpuNanos() throws Throwable {
      int rc = (int) clockGettime.invoke(CLOCK_PROCESS_CPUTIME_ID, timespec);
      if (rc != 0) {
        throw new IllegalStateException("clock_gettime returned " + rc);
      }
      long seconds = (long) getLong.invoke(timespec, 0L);
      long nanos = (long) getLong.invoke(timespec, 8L);
      return seconds * 1_000_000_000L + nanos;
    }

    static Optional<Native> find() {
      if (!System.getProperty("os.name", "").toLowerCase().contains("linux") || Runtime.version().feature() < 22) {
        return Optional.empty();
      }
      try {
        Class<?> linkerType = Class.forName("java.lang.foreign.Linker");
        Class<?> segmentType = Class.forName("java.lang.foreign.MemorySegment");
        Class<?> layoutType = Class.forName("java.lang.foreign.MemoryLayout");
        Class<?> valueLayouts = Class.forName("java.lang.foreign.ValueLayout");
        Class<?> descriptorType = Class.forName("java.lang.foreign.FunctionDescriptor");
        Class<?> optionType = Class.forName("java.lang.foreign.Linker$Option");
        Class<?> arenaType = Class.forName("java.lang.foreign.Arena");
        Class<?> longLayoutType = Class.forName("java.lang.foreign.ValueLayout$OfLong");

        Object linker = linkerType.getMethod("nativeLinker").invoke(null);
        Object lookup = linkerType.getMethod("defaultLookup").invoke(linker);
        Optional<?> symbol = (Optional<?>) Class.forName("java.lang.foreign.SymbolLookup")
            .getMethod("find", String.class).invoke(lookup, "clock_gettime");
        if (symbol.isEmpty()) {
          return Optional.empty();
        }
        Object javaInt = valueLayouts.getField("JAVA_INT").get(null);
        Object address = valueLayouts.getField("ADDRESS").get(null);
        Object javaLong = valueLayouts.getField("JAVA_LONG").get(null);
        Object layouts = Array.newInstance(layoutType, 2);
        Array.set(layouts, 0, javaInt);
        Array.set(layouts, 1, address);
        Object descriptor = descriptorType.getMethod("of", layoutType, layouts.getClass()).invoke(null, javaInt, layouts);
        Object options = Array.newInstance(optionType, 0);
        MethodHandle call = (MethodHandle) linkerType
            .getMethod("downcallHandle", segmentType, descriptorType, options.getClass())
            .invoke(linker, symbol.get(), descriptor, options);
        Object arena = arenaType.getMethod("global").invoke(null);
        Object timespec = arenaType.getMethod("allocate", long.class).invoke(arena, 16L);
        Method get = segmentType.getMethod("get", longLayoutType, long.class);
        MethodHandle getLong = MethodHandles.publicLookup().unreflect(get).bindTo(timespec);
        getLong = MethodHandles.insertArguments(getLong, 0, javaLong);
        MethodHandle bound = call.asType(call.type().changeParameterType(1, Object.class));
        Native clock = new Native(bound, timespec, MethodHandles.dropArguments(getLong, 0, Object.class));
        clock.processCpuNanos(); // fails here, not in the measurement, if something is off
        return Optional.of(clock);
      } catch (Throwable e) {
        return Optional.empty();
      }
    }
  }
}
