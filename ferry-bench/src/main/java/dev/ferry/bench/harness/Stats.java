package dev.ferry.bench.harness;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The statistics rules of {@code bench/WORKLOADS.md}, identical to {@code bench/pytorch/common.py}
 * so that Ferry's figures and PyTorch's mean the same thing:
 *
 * <ul>
 *   <li>median: the middle value, or the mean of the two middle values when the count is even
 *       (Python's {@code statistics.median});</li>
 *   <li>p90 / p99: nearest rank, the {@code ceil(q·n)}-th smallest value (1-based);</li>
 *   <li>calls/s: timed calls / wall time of the whole timed loop.</li>
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class Stats {

  private Stats() {}

  /** Median of {@code values} (not modified); the mean of the two middle values for an even count. */
  public static double median(double[] values) {
    requireNotEmpty(values.length);
    double[] s = values.clone();
    Arrays.sort(s);
    return medianOfSorted(s);
  }

  /** Median of values already sorted ascending. */
  public static double medianOfSorted(double[] sorted) {
    requireNotEmpty(sorted.length);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  }

  /**
   * Nearest-rank percentile of values sorted ascending: the {@code ceil(q·n)}-th smallest, clamped
   * to {@code 1..n}. The small epsilon matches common.py, where {@code 0.9 * 10} must give rank 9,
   * not 10 through a floating-point rounding up.
   */
  public static double percentileOfSorted(double[] sorted, double q) {
    requireNotEmpty(sorted.length);
    if (q < 0 || q > 1) {
      throw new IllegalArgumentException("q must be in [0, 1], got " + q);
    }
    int n = sorted.length;
    int k = (int) Math.ceil(q * n - 1e-9);
    k = Math.max(1, Math.min(n, k));
    return sorted[k - 1];
  }

  /**
   * Summary of per-call latencies in nanoseconds, in microseconds: {@code n, median_us, p90_us,
   * p99_us, mean_us} and, if {@code loopNanos > 0}, {@code calls_per_s = n / loop time}. The keys
   * and their order are those of common.py's {@code lat_summary}.
   */
  public static Map<String, Object> latencySummary(long[] latencyNanos, long loopNanos) {
    requireNotEmpty(latencyNanos.length);
    double[] s = new double[latencyNanos.length];
    double sum = 0;
    for (int i = 0; i < s.length; i++) {
      s[i] = latencyNanos[i];
      sum += latencyNanos[i];
    }
    Arrays.sort(s);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("n", s.length);
    out.put("median_us", medianOfSorted(s) / 1e3);
    out.put("p90_us", percentileOfSorted(s, 0.90) / 1e3);
    out.put("p99_us", percentileOfSorted(s, 0.99) / 1e3);
    out.put("mean_us", sum / s.length / 1e3);
    if (loopNanos > 0) {
      out.put("calls_per_s", s.length / (loopNanos / 1e9));
    }
    return out;
  }

  private static void requireNotEmpty(int n) {
    if (n == 0) {
      throw new IllegalArgumentException("no values");
    }
  }
}
