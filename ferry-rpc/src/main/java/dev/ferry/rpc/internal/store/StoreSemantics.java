package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The value rules of {@code add} and {@code compareSet}, kept in one place so that the TCP server
 * and the file store agree bit for bit (and with c10d, which stores counters as decimal text).
 */
public final class StoreSemantics {
    private StoreSemantics() {
    }

    /** The outcome of a compare-and-set: what to store (null: nothing) and what to return. */
    public record CompareSetOutcome(byte[] toStore, byte[] result) {
    }

    /**
     * The counter value after adding {@code delta} to {@code current} (null: absent, counts as 0).
     *
     * @throws RpcException INVALID_ARGUMENT if {@code current} is not a decimal integer or the sum overflows
     */
    public static long add(String key, byte[] current, long delta) {
        long base = current == null ? 0 : parseCounter(key, current);
        try {
            return Math.addExact(base, delta);
        } catch (ArithmeticException e) {
            throw new RpcException(Code.INVALID_ARGUMENT,
                    "Counter '" + key + "' would overflow: " + base + " + " + delta);
        }
    }

    public static byte[] encodeCounter(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static long parseCounter(String key, byte[] current) {
        String text = new String(current, StandardCharsets.US_ASCII);
        try {
            return Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            String shown = current.length > 40 ? text.substring(0, 40) + "..." : text;
            throw new RpcException(Code.INVALID_ARGUMENT,
                    "Cannot add to key '" + key + "': its value is not a decimal integer: '" + shown + "'");
        }
    }

    /** c10d's compare_set: swap on equality, or create when absent and {@code expected} is empty. */
    public static CompareSetOutcome compareSet(byte[] current, byte[] expected, byte[] desired) {
        if (current == null) {
            if (expected.length == 0) {
                return new CompareSetOutcome(desired, desired);
            }
            // c10d returns the expected value here even though nothing is stored; callers detect
            // the failed swap because the result differs from `desired`.
            return new CompareSetOutcome(null, expected);
        }
        if (Arrays.equals(current, expected)) {
            return new CompareSetOutcome(desired, desired);
        }
        return new CompareSetOutcome(null, current);
    }
}
