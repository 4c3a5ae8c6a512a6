package dev.ferry.metrics;

import java.util.Map;
import java.util.function.Supplier;

/**
 * An agent's debug info, read at most once per {@link #MAX_AGE_NANOS}: a scrape reads dozens of
 * gauges, and each would otherwise build the whole map. Thread-safe.
 */
final class DebugInfoSnapshot {
    /** Longer than a scrape takes, shorter than any scrape interval. */
    private static final long MAX_AGE_NANOS = 200_000_000L;

    private final Supplier<Map<String, String>> source;
    private volatile Map<String, String> info;
    private volatile long readNanos;

    DebugInfoSnapshot(Supplier<Map<String, String>> source) {
        this.source = source;
    }

    /** The entry {@code key} as a number; NaN when absent or not numeric (a gauge's "no value"). */
    double value(String key) {
        Map<String, String> current = info;
        long now = System.nanoTime();
        if (current == null || now - readNanos > MAX_AGE_NANOS) {
            current = source.get();
            info = current;
            readNanos = now;
        }
        Double value = parse(current.get(key));
        return value == null ? Double.NaN : value;
    }

    /** {@code text} as a number, or null when it is none (a name, a state). */
    static Double parse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        try {
            return Double.valueOf(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
