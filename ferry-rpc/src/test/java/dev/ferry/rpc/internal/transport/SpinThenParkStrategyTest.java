package dev.ferry.rpc.internal.transport;

import io.netty.channel.SelectStrategy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The event-loop idle strategy, without an event loop: what it tells the loop to do. */
class SpinThenParkStrategyTest {
    @Test
    void readyEventsAreReturnedAtOnce() throws Exception {
        SpinThenParkStrategy strategy = new SpinThenParkStrategy(Long.MAX_VALUE / 4);
        assertThat(strategy.calculateStrategy(() -> 3, false)).isEqualTo(3);
        assertThat(strategy.calculateStrategy(() -> 0, true)).isEqualTo(0);
    }

    @Test
    void withinTheWindowAfterActivityItPollsAgainInsteadOfBlocking() throws Exception {
        SpinThenParkStrategy strategy = new SpinThenParkStrategy(Long.MAX_VALUE / 4);
        assertThat(strategy.calculateStrategy(() -> 1, false)).isEqualTo(1);
        assertThat(strategy.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
    }

    @Test
    void withoutAWindowItBlocksWhenThereIsNothingToDo() throws Exception {
        SpinThenParkStrategy strategy = new SpinThenParkStrategy(0);
        assertThat(strategy.calculateStrategy(() -> 1, false)).isEqualTo(1);
        assertThat(strategy.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
    }
}
