package dev.ferry.rpc.internal.store;

import java.time.Duration;

/**
 * A point in time by which a store wait must end, or "never" for a timeout of {@link
 * Duration#ZERO}. Based on {@link System#nanoTime()}, so wall-clock jumps do not shorten waits.
 */
public final class Deadline {
    private static final Deadline NEVER = new Deadline(0, true);

    private final long deadlineNanos;
    private final boolean forever;

    private Deadline(long deadlineNanos, boolean forever) {
        this.deadlineNanos = deadlineNanos;
        this.forever = forever;
    }

    /** The deadline {@code timeout} from now; ZERO means no deadline. */
    public static Deadline after(Duration timeout) {
        if (timeout.isZero()) {
            return NEVER;
        }
        // Saturated: a timeout of centuries would overflow a nanosecond count.
        long nanos = Math.min(StoreArguments.toNanosSaturated(timeout), Long.MAX_VALUE / 4);
        return new Deadline(System.nanoTime() + nanos, false);
    }

    public boolean isForever() {
        return forever;
    }

    /** Nanoseconds left, never negative; {@link Long#MAX_VALUE} for a deadline that never comes. */
    public long remainingNanos() {
        if (forever) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, deadlineNanos - System.nanoTime());
    }

    public boolean expired() {
        return !forever && deadlineNanos - System.nanoTime() <= 0;
    }
}
