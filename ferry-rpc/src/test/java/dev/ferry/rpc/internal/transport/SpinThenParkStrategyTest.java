package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import io.netty.channel.SelectStrategy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
        assumeTrue(AdaptiveSpin.MULTI_CPU, "nothing spins on a single CPU");
        // No contention limit: a slow yield on a busy test machine must not end the spin here.
        SpinThenParkStrategy strategy = new SpinThenParkStrategy(new AdaptiveSpin(Long.MAX_VALUE / 4, Long.MAX_VALUE));
        assertThat(strategy.calculateStrategy(() -> 1, false)).isEqualTo(1);
        assertThat(strategy.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.CONTINUE);
    }

    @Test
    void withoutAWindowItBlocksWhenThereIsNothingToDo() throws Exception {
        SpinThenParkStrategy strategy = new SpinThenParkStrategy(0);
        assertThat(strategy.calculateStrategy(() -> 1, true)).isEqualTo(1);
        // Outside a window it selects at once, as Netty's default does (epoll_wait returns what is ready).
        assertThat(strategy.calculateStrategy(() -> 1, false)).isEqualTo(SelectStrategy.SELECT);
    }

    @Test
    void aWindowThatPassesWithNothingShrinksTheNextOne() throws Exception {
        assumeTrue(AdaptiveSpin.MULTI_CPU, "nothing spins on a single CPU");
        SpinThenParkStrategy strategy = new SpinThenParkStrategy(1);
        assertThat(strategy.calculateStrategy(() -> 1, true)).isEqualTo(1);
        // A 1 ns window is over by the next call: it blocks.
        assertThat(strategy.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
    }
}
