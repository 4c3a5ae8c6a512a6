package dev.ferry.rpc.testing;

import com.sun.management.ThreadMXBean;

import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;

/**
 * Heap the whole JVM allocates for one fuzzer try, counted only when warm. The first time a JVM
 * takes a path it pays once for what no input can make it pay again: Fory builds the serializers
 * of a type it meets for the first time, call sites are linked, classes loaded (a fuzzer's first
 * try allocates ~3.8 MB where the next ones take tens of kilobytes; issue 23 saw ~17 MiB). A try
 * over its bound is therefore run again, the same input against the same server, and counted only
 * if it is over the bound again: a real over-allocation (a hostile length honoured) repeats, a
 * cold path does not.
 */
public final class WarmAllocation {
    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    private WarmAllocation() {
    }

    /** A try that may throw what the fuzzer's checks throw. */
    @FunctionalInterface
    public interface Try {
        void run() throws Exception;
    }

    /**
     * What a try allocated: {@code bytes} in the run counted, {@code runs} 1 when the first was
     * within the bound, 2 when it was over and the second was counted.
     */
    public record Allocation(long bytes, int runs) {
    }

    /**
     * Runs {@code attempt} and, when it allocated more than {@code bound} (read after the run: it may
     * depend on what the try sent), runs it once more and counts that run.
     */
    public static Allocation of(Try attempt, LongSupplier bound) throws Exception {
        long first = allocatedBy(attempt);
        if (first <= bound.getAsLong()) {
            return new Allocation(first, 1);
        }
        return new Allocation(allocatedBy(attempt), 2);
    }

    private static long allocatedBy(Try attempt) throws Exception {
        long before = THREADS.getTotalThreadAllocatedBytes();
        attempt.run();
        return THREADS.getTotalThreadAllocatedBytes() - before;
    }
}
