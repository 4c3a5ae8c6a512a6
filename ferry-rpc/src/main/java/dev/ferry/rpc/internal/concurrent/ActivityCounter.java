package dev.ferry.rpc.internal.concurrent;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts work in progress and lets a thread wait until there is none (graceful shutdown waits
 * for calls, requests and control messages this way).
 *
 * <p>This class is thread-safe.
 */
public final class ActivityCounter {
    private final AtomicInteger active = new AtomicInteger();
    private final Object idle = new Object();

    public void increment() {
        active.incrementAndGet();
    }

    public void decrement() {
        if (active.decrementAndGet() == 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    public int get() {
        return active.get();
    }

    /** Waits until the count is zero; false if {@code timeout} passed first (zero: no limit). */
    public boolean awaitZero(Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        long limit = timeout.isZero() ? Long.MAX_VALUE : timeout.toNanos();
        synchronized (idle) {
            while (active.get() > 0) {
                long left = limit - (System.nanoTime() - start);
                if (left <= 0) {
                    return false;
                }
                // bounded waits: a missed notification costs at most a second
                idle.wait(Math.max(1, Math.min(left / 1_000_000, 1_000)));
            }
            return true;
        }
    }
}
