package dev.ferry.rpc.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits, with a bound, for a condition that another thread makes true (e.g. a server noticing a disconnect). */
public final class Eventually {
    private static final Duration BOUND = Duration.ofSeconds(10);

    private Eventually() {
    }

    /** Returns once {@code condition} holds; fails the test if it does not within the bound. */
    public static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not true within " + BOUND + ": " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }
}
