package dev.ferry.rpc.internal.text;

import java.math.BigDecimal;
import java.time.Duration;

/**
 * How Ferry writes a duration in a message a person reads: {@code 250 ms}, {@code 1.5 s},
 * {@code 60 s}, {@code 2 min 30 s}, not {@link Duration#toString()}'s {@code PT2M30S}. Messages
 * that follow PyTorch's wording (a gather's "after 0.10 seconds", a store's "after 60000 ms") keep
 * theirs.
 */
public final class Durations {

    private Durations() {
    }

    /** {@code duration} for a message. */
    public static String describe(Duration duration) {
        if (duration.isNegative()) {
            return "-" + describe(duration.negated());
        }
        if (!duration.isZero() && duration.compareTo(Duration.ofMillis(1)) < 0) {
            return duration.toNanos() / 1_000 + " µs";
        }
        long millis = duration.toMillis();
        if (millis < 1_000) {
            return millis + " ms";
        }
        if (millis < 60_000) {
            return BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString() + " s";
        }
        long minutes = duration.toMinutes();
        long seconds = duration.toSecondsPart();
        return minutes + " min" + (seconds == 0 ? "" : " " + seconds + " s");
    }
}
