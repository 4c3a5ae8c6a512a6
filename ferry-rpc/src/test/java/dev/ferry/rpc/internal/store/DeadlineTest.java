package dev.ferry.rpc.internal.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DeadlineTest {

    @Test
    void zeroMeansNever() {
        Deadline never = Deadline.after(Duration.ZERO);
        assertThat(never.isForever()).isTrue();
        assertThat(never.expired()).isFalse();
        assertThat(never.remainingNanos()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void hugeTimeoutsDoNotOverflow() {
        Deadline far = Deadline.after(Duration.ofDays(1_000_000));
        assertThat(far.expired()).isFalse();
        assertThat(far.remainingNanos()).isPositive();
    }

    @Test
    void wireMillisRoundUpSoATinyTimeoutIsNotForever() {
        assertThat(StoreArguments.toWireMillis(Duration.ZERO)).isZero();
        assertThat(StoreArguments.toWireMillis(Duration.ofNanos(1))).isEqualTo(1);
        assertThat(StoreArguments.toWireMillis(Duration.ofMillis(5))).isEqualTo(5);
        assertThat(StoreArguments.toWireMillis(Duration.ofNanos(5_000_001))).isEqualTo(6);
    }
}
