package dev.ferry.rpc.internal.observe;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class LatencyHistogramTest {

    @Test
    void anEmptyHistogramReportsZero() {
        LatencyHistogram histogram = new LatencyHistogram();
        assertThat(histogram.count()).isZero();
        assertThat(histogram.percentile(0.5)).isZero();
        assertThat(histogram.max()).isZero();
    }

    @Test
    void bucketsCoverEveryValueOnceAndInOrder() {
        long previousHighest = -1;
        for (int i = 0; i < LatencyHistogram.BUCKETS; i++) {
            long highest = LatencyHistogram.highestIn(i);
            assertThat(highest).isGreaterThan(previousHighest);
            // The value just above the previous bucket and this bucket's highest both land here.
            assertThat(LatencyHistogram.bucket(previousHighest + 1)).isEqualTo(i);
            assertThat(LatencyHistogram.bucket(highest)).isEqualTo(i);
            if (previousHighest >= 16) {
                assertThat((double) (highest - previousHighest) / (previousHighest + 1)).isLessThanOrEqualTo(1.0 / 16);
            }
            previousHighest = highest;
        }
        assertThat(LatencyHistogram.bucket(Long.MAX_VALUE)).isEqualTo(LatencyHistogram.BUCKETS - 1);
    }

    @Test
    void percentilesAreNearestRankWithinOneSixteenth() {
        LatencyHistogram histogram = new LatencyHistogram();
        for (long v = 1; v <= 1000; v++) {
            histogram.record(v * 1_000);   // 1 µs .. 1 ms
        }
        assertThat(histogram.count()).isEqualTo(1000);
        assertThat(histogram.max()).isEqualTo(1_000_000);
        for (double q : new double[] {0.01, 0.5, 0.9, 0.99, 0.999}) {
            long exact = (long) Math.ceil(q * 1000) * 1_000;
            assertThat((double) histogram.percentile(q)).as("q=%s", q)
                    .isGreaterThanOrEqualTo(exact).isCloseTo(exact, within(exact / 16.0));
        }
        assertThat(histogram.percentile(1.0)).isEqualTo(1_000_000);
    }

    @Test
    void smallValuesAreExactAndNegativeOnesCountAsZero() {
        LatencyHistogram histogram = new LatencyHistogram();
        histogram.record(-5);
        histogram.record(3);
        histogram.record(7);
        assertThat(histogram.percentile(0.3)).isZero();
        assertThat(histogram.percentile(0.6)).isEqualTo(3);
        assertThat(histogram.percentile(1)).isEqualTo(7);
        assertThatThrownBy(() -> histogram.percentile(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("quantile");
    }

    @Test
    void threadsRecordingTogetherLoseNothing() throws Exception {
        LatencyHistogram histogram = new LatencyHistogram();
        int threads = 4;
        int each = 50_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Long>> maxima = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                long seed = t;
                maxima.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    long max = 0;
                    start.await();
                    for (int i = 0; i < each; i++) {
                        long value = random.nextLong(1, 10_000_000_000L);
                        max = Math.max(max, value);
                        histogram.record(value);
                    }
                    return max;
                }));
            }
            start.countDown();
            long max = 0;
            for (Future<Long> m : maxima) {
                max = Math.max(max, m.get());
            }
            assertThat(histogram.count()).isEqualTo((long) threads * each);
            assertThat(histogram.max()).isEqualTo(max);
        } finally {
            pool.shutdownNow();
        }
    }
}
