package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RetriedSends} on a scheduler that runs each retry at once and records its delay. */
class RetriedSendsTest {
    private final List<Long> delaysMillis = new ArrayList<>();
    private final RetriedSends.Scheduler now = (task, nanos) -> {
        delaysMillis.add(nanos / 1_000_000);
        task.run();
    };

    private static Supplier<RpcFuture<String>> failingFirst(int failures, RpcException.Code code, AtomicInteger sends) {
        return () -> {
            RpcFuture<String> sent = new RpcFuture<>();
            if (sends.incrementAndGet() <= failures) {
                sent.setException(new RpcException(code, "send " + sends.get() + " failed"));
            } else {
                sent.setResult("ok");
            }
            return sent;
        };
    }

    @Test
    void aSendThatFailsUnavailableIsMadeAgainWithADoublingBackoff() {
        AtomicInteger sends = new AtomicInteger();
        RpcFuture<String> outcome = RetriedSends.send("m", failingFirst(3, RpcException.Code.UNAVAILABLE, sends),
                () -> true, now);
        assertThat(outcome.value()).isEqualTo("ok");
        assertThat(sends).hasValue(4);
        assertThat(delaysMillis).containsExactly(50L, 100L, 200L);
    }

    @Test
    void afterFiveRetriesTheLastFailureIsTheOutcome() {
        AtomicInteger sends = new AtomicInteger();
        RpcFuture<String> outcome = RetriedSends.send("m", failingFirst(100, RpcException.Code.UNAVAILABLE, sends),
                () -> true, now);
        assertThat(outcome.exceptionNow()).hasMessageContaining("send 6 failed");
        assertThat(sends).hasValue(1 + RetriedSends.MAX_RETRIES);
        assertThat(delaysMillis).containsExactly(50L, 100L, 200L, 400L, 800L);
    }

    @Test
    void otherFailuresAndAClosingSenderEndTheTries() {
        AtomicInteger sends = new AtomicInteger();
        RpcFuture<String> timedOut = RetriedSends.send("m", failingFirst(100, RpcException.Code.TIMEOUT, sends),
                () -> true, now);
        assertThat(timedOut.exceptionNow()).hasMessageContaining("send 1 failed");
        sends.set(0);
        RpcFuture<String> closing = RetriedSends.send("m", failingFirst(100, RpcException.Code.UNAVAILABLE, sends),
                () -> false, now);
        assertThat(closing.exceptionNow()).hasMessageContaining("send 1 failed");
        RpcFuture<String> unmade = RetriedSends.send("m", () -> {
            throw new IllegalStateException("cannot encode");
        }, () -> true, now);
        assertThat(unmade.exceptionNow()).isInstanceOf(IllegalStateException.class);
        assertThat(delaysMillis).isEmpty();
    }
}
