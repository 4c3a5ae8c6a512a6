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

    @Test
    void untilDeliveredGoesOnPastSixSendsEveryFiveSecondsAtMostOnUnavailableAndTimeout() {
        AtomicInteger sends = new AtomicInteger();
        Supplier<RpcFuture<String>> alternating = () -> {
            RpcFuture<String> sent = new RpcFuture<>();
            int n = sends.incrementAndGet();
            if (n <= 10) {
                sent.setException(new RpcException(n % 2 == 0 ? RpcException.Code.TIMEOUT : RpcException.Code.UNAVAILABLE,
                        "send " + n + " failed"));
            } else {
                sent.setResult("ok");
            }
            return sent;
        };
        RpcFuture<String> outcome = RetriedSends.untilDelivered("m", alternating, () -> true, now);
        assertThat(outcome.value()).isEqualTo("ok");
        assertThat(sends).hasValue(11);
        assertThat(delaysMillis).containsExactly(50L, 100L, 200L, 400L, 800L, 1_600L, 3_200L, 5_000L, 5_000L, 5_000L);
        assertThat(RetriedSends.retryDelayNanos(1_000)).isEqualTo(RetriedSends.MAX_INTERVAL.toNanos());
    }

    @Test
    void untilDeliveredStopsWhenItsPeerGoesWhileItWaitsAndOnOtherFailures() {
        AtomicInteger sends = new AtomicInteger();
        List<Runnable> due = new ArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean member = new java.util.concurrent.atomic.AtomicBoolean(true);
        RpcFuture<String> outcome = RetriedSends.untilDelivered("m", failingFirst(100, RpcException.Code.UNAVAILABLE, sends),
                member::get, (task, nanos) -> due.add(task));
        assertThat(due).hasSize(1);
        member.set(false); // it left while the resend waited: it is not sent
        due.getFirst().run();
        assertThat(sends).hasValue(1);
        assertThat(outcome.exceptionNow()).hasMessageContaining("send 1 failed");

        sends.set(0);
        RpcFuture<String> refused = RetriedSends.untilDelivered("m", failingFirst(100, RpcException.Code.REMOTE_ERROR, sends),
                () -> true, now);
        assertThat(refused.exceptionNow()).hasMessageContaining("send 1 failed");
        assertThat(delaysMillis).isEmpty();
    }
}
