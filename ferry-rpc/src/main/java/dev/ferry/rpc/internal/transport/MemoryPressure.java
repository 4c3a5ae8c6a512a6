package dev.ferry.rpc.internal.transport;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The one place that asks the JVM to find received memory the application has dropped: ranges of
 * the receive pool ({@link LargeBufferPool}) and of shared-memory segments ({@link SharedMemory})
 * whose views nobody released ({@code ReceivedBuffers.release}) come back only when the garbage
 * collector finds them unreachable. When such memory runs short, {@link #collectSoon} asks for a
 * collection ({@link System#gc()}, as the JDK does when its direct memory runs out) on a thread of
 * its own, never on the caller's: an event loop that needs memory takes fresh memory now and finds
 * the returned ranges next time, instead of waiting for a collection while every message behind
 * waits too. At most one collection at a time, at most every {@link #MIN_INTERVAL_NANOS}, and less
 * often (doubling to {@link #MAX_INTERVAL_NANOS}) while collections bring nothing back (the
 * application holds its buffers, or {@code -XX:+DisableExplicitGC}). Off with
 * {@code TransportTuning.memoryCollections(false)}, for large heaps where a full collection costs
 * more than fresh memory.
 *
 * <p>This class is thread-safe.
 */
final class MemoryPressure {
    static final long MIN_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    static final long MAX_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long a collection's findings take to reach the pools (the JDK's reference handler runs after it). */
    private static final long RETURN_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final boolean enabled;
    private final AtomicBoolean collecting = new AtomicBoolean();
    private final LongAdder collections = new LongAdder();
    private volatile long lastCollection = System.nanoTime() - MIN_INTERVAL_NANOS;
    private volatile long interval = MIN_INTERVAL_NANOS;

    MemoryPressure(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Asks for a collection soon, on a virtual thread, unless one runs or ran too recently;
     * {@code lent} reports how much of the memory short is still lent (each pool takes back what
     * the collection found when it is asked), to tell whether the collection brought anything back.
     */
    void collectSoon(LongSupplier lent) {
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastCollection < interval || !collecting.compareAndSet(false, true)) {
            return;
        }
        lastCollection = now;
        Thread.ofVirtual().name("ferry-memory-collection").start(() -> {
            try {
                long before = lent.getAsLong();
                collections.increment();
                System.gc();
                LockSupport.parkNanos(RETURN_NANOS);
                interval = lent.getAsLong() < before ? MIN_INTERVAL_NANOS : Math.min(interval * 2, MAX_INTERVAL_NANOS);
            } finally {
                lastCollection = System.nanoTime();
                collecting.set(false);
            }
        });
    }

    /** Collections asked for so far. */
    long collections() {
        return collections.sum();
    }

    boolean enabled() {
        return enabled;
    }
}
