package dev.ferry.rpc.internal.observe;

import org.slf4j.Logger;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Warnings that a peer can cause at will (calls refused by the policies, connections dropped before
 * they authenticated), bounded so that a hostile peer cannot flood the log: at most {@code burst} lines per window; the rest are counted, and the
 * first line of a later window says how many were left out.
 *
 * <p>This class is thread-safe.
 */
public final class RateLimitedLog {
    private final Logger log;
    private final int burst;
    private final long windowNanos;
    private final LongSupplier clock;
    private long windowStart;
    private int loggedInWindow;
    private long leftOutInWindow;
    private long logged;
    private long leftOut;

    /** At most {@code burst} lines a minute: the bound used for what peers cause. */
    public static RateLimitedLog perMinute(Logger log, int burst) {
        return new RateLimitedLog(log, burst, TimeUnit.MINUTES.toNanos(1), System::nanoTime);
    }

    /** {@code clock}: nanoseconds, as {@link System#nanoTime()} (tests give their own). */
    public RateLimitedLog(Logger log, int burst, long windowNanos, LongSupplier clock) {
        this.log = log;
        this.burst = burst;
        this.windowNanos = windowNanos;
        this.clock = clock;
        this.windowStart = clock.getAsLong();
    }

    /** Logs at warning level, as {@link Logger#warn(String, Object...)}, unless this window's burst is spent. */
    public void warn(String format, Object... arguments) {
        long leftOutBefore;
        synchronized (this) {
            long now = clock.getAsLong();
            leftOutBefore = 0;
            if (now - windowStart >= windowNanos) {
                leftOutBefore = leftOutInWindow;
                windowStart = now;
                loggedInWindow = 0;
                leftOutInWindow = 0;
            }
            if (loggedInWindow >= burst) {
                leftOutInWindow++;
                leftOut++;
                return;
            }
            loggedInWindow++;
            logged++;
        }
        if (leftOutBefore > 0) {
            log.warn("{} more warnings like the next were left out of the log (at most {} are logged per {} s)",
                    leftOutBefore, burst, TimeUnit.NANOSECONDS.toSeconds(windowNanos));
        }
        log.warn(format, arguments);
    }

    /** Lines written so far. */
    public synchronized long logged() {
        return logged;
    }

    /** Lines left out so far. */
    public synchronized long leftOut() {
        return leftOut;
    }
}
