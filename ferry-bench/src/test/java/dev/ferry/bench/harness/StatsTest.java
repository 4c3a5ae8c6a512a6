package dev.ferry.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The statistics rules of WORKLOADS.md, with values checked against Python's statistics/common.py. */
class StatsTest {

  @Test
  void medianOfOddCountIsTheMiddleValue() {
    assertThat(Stats.median(new double[] {5, 1, 3})).isEqualTo(3.0);
  }

  @Test
  void medianOfEvenCountIsTheMeanOfTheTwoMiddleValues() {
    // statistics.median([4, 1, 3, 2]) == 2.5
    assertThat(Stats.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
  }

  @Test
  void medianDoesNotReorderItsInput() {
    double[] values = {3, 1, 2};
    Stats.median(values);
    assertThat(values).containsExactly(3, 1, 2);
  }

  @Test
  void percentilesAreNearestRank() {
    double[] sorted = new double[10];
    for (int i = 0; i < 10; i++) {
      sorted[i] = i + 1; // 1..10
    }
    // ceil(0.9 * 10) = 9th smallest, not the 10th a rounding error would give
    assertThat(Stats.percentileOfSorted(sorted, 0.90)).isEqualTo(9.0);
    // ceil(0.99 * 10) = 10th
    assertThat(Stats.percentileOfSorted(sorted, 0.99)).isEqualTo(10.0);
    assertThat(Stats.percentileOfSorted(sorted, 0.0)).isEqualTo(1.0);
    assertThat(Stats.percentileOfSorted(new double[] {7}, 0.99)).isEqualTo(7.0);
  }

  @Test
  void percentileOfAHundredValues() {
    double[] sorted = new double[100];
    for (int i = 0; i < 100; i++) {
      sorted[i] = i + 1;
    }
    assertThat(Stats.percentileOfSorted(sorted, 0.90)).isEqualTo(90.0);
    assertThat(Stats.percentileOfSorted(sorted, 0.99)).isEqualTo(99.0);
  }

  @Test
  void latencySummaryIsInMicrosecondsWithCallsPerSecond() {
    long[] ns = {4_000, 1_000, 3_000, 2_000};
    Map<String, Object> s = Stats.latencySummary(ns, 2_000_000_000L);
    assertThat(s).containsOnlyKeys("n", "median_us", "p90_us", "p99_us", "mean_us", "calls_per_s");
    assertThat(s.get("n")).isEqualTo(4);
    assertThat((Double) s.get("median_us")).isEqualTo(2.5);
    assertThat((Double) s.get("p90_us")).isEqualTo(4.0);
    assertThat((Double) s.get("p99_us")).isEqualTo(4.0);
    assertThat((Double) s.get("mean_us")).isEqualTo(2.5);
    assertThat((Double) s.get("calls_per_s")).isCloseTo(2.0, within(1e-12));
  }

  @Test
  void latencySummaryWithoutLoopTimeHasNoRate() {
    assertThat(Stats.latencySummary(new long[] {1_000}, 0)).doesNotContainKey("calls_per_s");
  }

  @Test
  void emptyInputIsRejected() {
    assertThatThrownBy(() -> Stats.median(new double[0])).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Stats.latencySummary(new long[0], 1)).isInstanceOf(IllegalArgumentException.class);
  }
}
