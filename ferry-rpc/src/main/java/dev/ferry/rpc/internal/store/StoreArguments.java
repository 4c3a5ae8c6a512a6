package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** Argument checks shared by every store implementation, so they all fail the same way. */
public final class StoreArguments {
    private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE / 2);

    private StoreArguments() {
    }

    public static String key(String key) {
        return Objects.requireNonNull(key, "key");
    }

    public static byte[] value(byte[] value, String name) {
        return Objects.requireNonNull(value, name);
    }

    /** The keys as an immutable list; rejects a null list or null element. */
    public static List<String> keys(List<String> keys) {
        Objects.requireNonNull(keys, "keys");
        for (String key : keys) {
            Objects.requireNonNull(key, "keys must not contain null");
        }
        return List.copyOf(keys);
    }

    /** A timeout must be ZERO (forever) or positive. */
    public static Duration timeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new RpcException(Code.INVALID_ARGUMENT,
                    "Store timeout must be positive, or Duration.ZERO for no timeout, but got " + timeout);
        }
        return timeout;
    }

    /** The duration in nanoseconds, capped at about 146 years instead of overflowing. */
    public static long toNanosSaturated(Duration duration) {
        return duration.compareTo(MAX_NANOS) >= 0 ? Long.MAX_VALUE / 2 : duration.toNanos();
    }

    /**
     * The timeout in whole milliseconds for the wire, rounded up so that a sub-millisecond timeout
     * is not mistaken for ZERO (forever).
     */
    public static long toWireMillis(Duration timeout) {
        if (timeout.isZero()) {
            return 0;
        }
        if (timeout.compareTo(MAX_NANOS) >= 0) {
            return MAX_NANOS.toMillis();
        }
        long millis = timeout.toMillis();
        boolean hasRemainder = timeout.minusMillis(millis).isPositive();
        return hasRemainder || millis == 0 ? millis + 1 : millis;
    }
}
