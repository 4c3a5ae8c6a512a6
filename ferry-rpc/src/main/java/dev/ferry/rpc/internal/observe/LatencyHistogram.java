package dev.ferry.rpc.internal.observe;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Durations in nanoseconds, counted in log-linear buckets, for percentiles in debug info: 16
 * buckets per power of two, so a percentile is reported within 1/16 (6.25 %) of the value it stands
 * for, from 1 ns to ~2.4 hours (longer durations count in the last bucket). One array increment per
 * value and no allocation, cheap enough for every call; 5 KiB per histogram.
 *
 * <pre>
 * LatencyHistogram rtt = new LatencyHistogram();
 * rtt.record(System.nanoTime() - start);
 * long p99 = rtt.percentile(0.99);   // an upper bound of the bucket holding the 99th percentile
 * </pre>
 *
 * <p>This class is thread-safe; a percentile read while values are recorded counts some of them.
 */
public final class LatencyHistogram {
    private static final int SUB_BITS = 4;
    private static final int SUB_BUCKETS = 1 << SUB_BITS;
    /** The largest power of two kept apart; durations from 2^43 ns on share the last bucket. */
    private static final int MAX_EXPONENT = 42;
    static final int BUCKETS = (MAX_EXPONENT - SUB_BITS + 2) * SUB_BUCKETS;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final AtomicLong max = new AtomicLong();

    /** Counts one duration; negative ones (a clock read out of order) count as 0. */
    public void record(long nanos) {
        long value = Math.max(0, nanos);
        counts.incrementAndGet(bucket(value));
        if (value > max.get()) {
            max.accumulateAndGet(value, Math::max);
        }
    }

    /** How many durations were recorded. */
    public long count() {
        long total = 0;
        for (int i = 0; i < BUCKETS; i++) {
            total += counts.get(i);
        }
        return total;
    }

    /** The longest duration recorded, exactly; 0 if none. */
    public long max() {
        return max.get();
    }

    /**
     * The {@code quantile} (0 < quantile ≤ 1) by nearest rank: the highest duration the bucket of
     * the {@code ceil(quantile × count)}-th smallest value holds, but no more than {@link #max()};
     * 0 if nothing was recorded.
     */
    public long percentile(double quantile) {
        if (!(quantile > 0 && quantile <= 1)) {
            throw new IllegalArgumentException("quantile must be in (0, 1], got " + quantile);
        }
        long[] snapshot = new long[BUCKETS];
        long total = 0;
        for (int i = 0; i < BUCKETS; i++) {
            snapshot[i] = counts.get(i);
            total += snapshot[i];
        }
        if (total == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(quantile * total));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += snapshot[i];
            if (seen >= rank) {
                return Math.min(highestIn(i), max());
            }
        }
        return max();
    }

    /** The bucket of {@code value} (≥ 0): values below 16 have one each, then 16 per power of two. */
    static int bucket(long value) {
        if (value < SUB_BUCKETS) {
            return (int) value;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(value);
        if (exponent > MAX_EXPONENT) {
            return BUCKETS - 1;
        }
        int sub = (int) (value >>> (exponent - SUB_BITS)) & (SUB_BUCKETS - 1);
        return (exponent - SUB_BITS + 1) * SUB_BUCKETS + sub;
    }

    /** The highest value bucket {@code index} holds. */
    static long highestIn(int index) {
        if (index < SUB_BUCKETS) {
            return index;
        }
        int exponent = index / SUB_BUCKETS + SUB_BITS - 1;
        long lowest = (long) (SUB_BUCKETS + index % SUB_BUCKETS) << (exponent - SUB_BITS);
        return lowest + (1L << (exponent - SUB_BITS)) - 1;
    }
}
