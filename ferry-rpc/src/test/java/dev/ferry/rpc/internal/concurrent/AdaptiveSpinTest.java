package dev.ferry.rpc.internal.concurrent;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The spin budget: halves on misses down to zero, grows back on hits up to the maximum. */
class AdaptiveSpinTest {
    @Test
    void missesShrinkTheBudgetToZeroAndHitsRestoreIt() {
        assumeTrue(AdaptiveSpin.MULTI_CPU, "nothing spins on a single CPU");
        AdaptiveSpin spin = new AdaptiveSpin(1_600);
        assertThat(spin.budgetNanos()).isEqualTo(1_600);
        spin.miss();
        assertThat(spin.budgetNanos()).isEqualTo(800);
        for (int i = 0; i < 10; i++) {
            spin.miss();
        }
        assertThat(spin.budgetNanos()).isZero();
        spin.hit();
        assertThat(spin.budgetNanos()).isEqualTo(100);
        for (int i = 0; i < 10; i++) {
            spin.hit();
        }
        assertThat(spin.budgetNanos()).isEqualTo(1_600);
    }

    @Test
    void aParkedWaitRestoresTheFullSpinOnlyIfAFullSpinWouldHaveCaughtIt() {
        assumeTrue(AdaptiveSpin.MULTI_CPU, "nothing spins on a single CPU");
        AdaptiveSpin spin = new AdaptiveSpin(1_600);
        for (int i = 0; i < 10; i++) {
            spin.miss();
        }
        spin.parkedWaitEnded(3_300);
        assertThat(spin.budgetNanos()).isZero();
        spin.parkedWaitEnded(3_100);
        assertThat(spin.budgetNanos()).isEqualTo(1_600);
    }

    @Test
    void zeroNeverSpins() {
        AdaptiveSpin spin = new AdaptiveSpin(0);
        spin.hit();
        spin.parkedWaitEnded(1);
        assertThat(spin.budgetNanos()).isZero();
        assertThat(spin.maxNanos()).isZero();
    }

    @Test
    void aSlowYieldCountsAsAMiss() {
        assumeTrue(AdaptiveSpin.MULTI_CPU, "nothing spins on a single CPU");
        AdaptiveSpin contended = new AdaptiveSpin(1_600, -1); // every yield is "too slow"
        assertThat(contended.yieldUncontended()).isFalse();
        assertThat(contended.budgetNanos()).isEqualTo(800);
        AdaptiveSpin free = new AdaptiveSpin(1_600, Long.MAX_VALUE);
        assertThat(free.yieldUncontended()).isTrue();
        assertThat(free.budgetNanos()).isEqualTo(1_600);
    }
}
