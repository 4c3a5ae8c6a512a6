package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code collectAll} and {@code waitAll}: ports of PyTorch's test_wait_all_* tests. */
@Timeout(30)
class RpcFutureWaitAllTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private RpcFuture<Integer> succeedingLater(int value) {
        RpcFuture<Integer> future = new RpcFuture<>();
        pool.execute(() -> future.setResult(value));
        return future;
    }

    private RpcFuture<Integer> failingLater(String message) {
        RpcFuture<Integer> future = new RpcFuture<>();
        pool.execute(() -> future.setException(new IllegalArgumentException(message)));
        return future;
    }

    @Test
    void waitAllReturnsValuesInOrder() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            futures.add(succeedingLater(i));
        }
        List<Integer> values = RpcFuture.waitAll(futures);
        assertThat(values).hasSize(20);
        for (int i = 0; i < 20; i++) {
            assertThat(values.get(i)).isEqualTo(i);
        }
        assertThatThrownBy(() -> values.add(1)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void waitAllKeepsNullValues() {
        assertThat(RpcFuture.waitAll(List.of(RpcFuture.completed(null), RpcFuture.completed("a"))))
                .containsExactly(null, "a");
    }

    @Test
    void waitAllOfNothingIsEmpty() {
        assertThat(RpcFuture.waitAll(List.<RpcFuture<Integer>>of())).isEmpty();
        RpcFuture<List<RpcFuture<?>>> all = RpcFuture.collectAll(List.of());
        assertThat(all.done()).isTrue();
        assertThat(all.value()).isEmpty();
    }

    /** test_wait_all_with_exception */
    @Test
    void waitAllWithException() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            futures.add(failingLater("Expected error"));
        }
        assertThatThrownBy(() -> RpcFuture.waitAll(futures, WAIT))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error");
    }

    /** test_wait_all_with_partial_exception */
    @Test
    void waitAllWithPartialException() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            futures.add(succeedingLater(i));
        }
        futures.add(failingLater("Expected error"));
        assertThatThrownBy(() -> RpcFuture.waitAll(futures, WAIT))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error");
    }

    /** test_wait_all_exit_early_python: a never-completing future does not delay the failure. */
    @Test
    void waitAllExitsEarlyOnFailure() {
        RpcFuture<Integer> blockedForever = new RpcFuture<>();
        List<RpcFuture<Integer>> futures = List.of(blockedForever, failingLater("Expected error"),
                failingLater("Expected error"));

        // No timeout: if waitAll waited for blockedForever, the class @Timeout would fail the test.
        assertThatThrownBy(() -> RpcFuture.waitAll(futures))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error");
        assertThat(blockedForever.done()).isFalse();
        blockedForever.setResult(0);  // "then release", as the torch test does
    }

    @Test
    void waitAllThrowsRpcFailuresAsFreshCopiesWithTheirCode() {
        RpcException timeout = new RpcException(RpcException.Code.TIMEOUT, "Call timed out");
        List<RpcFuture<Integer>> futures = List.of(succeedingLater(1), RpcFuture.failed(timeout));
        RpcException thrown = catchThrowableOfType(RpcException.class, () -> RpcFuture.waitAll(futures, WAIT));
        assertThat(thrown.code()).isEqualTo(RpcException.Code.TIMEOUT);
        assertThat(thrown.getCause()).isSameAs(timeout);
    }

    @Test
    void waitAllTimesOutWhenSomeNeverComplete() {
        List<RpcFuture<Integer>> futures = List.of(RpcFuture.completed(1), new RpcFuture<>());
        RpcException thrown = catchThrowableOfType(RpcException.class,
                () -> RpcFuture.waitAll(futures, Duration.ofMillis(20)));
        assertThat(thrown.code()).isEqualTo(RpcException.Code.TIMEOUT);
    }

    @Test
    void collectAllCompletesWithTheInputFutures() {
        RpcFuture<Integer> a = succeedingLater(1);
        RpcFuture<Integer> b = succeedingLater(2);
        RpcFuture<String> c = RpcFuture.completed("c");
        List<RpcFuture<?>> inputs = List.of(a, b, c);

        List<RpcFuture<?>> collected = RpcFuture.collectAll(inputs).await(WAIT);

        assertThat(collected).hasSize(3);
        assertThat(collected.get(0)).isSameAs(a);
        assertThat(collected.get(1)).isSameAs(b);
        assertThat(collected.get(2)).isSameAs(c);
        assertThat(collected).allMatch(RpcFuture::done);
    }

    @Test
    void collectAllFailsAsSoonAsOneInputFails() {
        RpcFuture<Integer> pending = new RpcFuture<>();
        RpcFuture<Integer> failing = new RpcFuture<>();
        RpcFuture<List<RpcFuture<?>>> all = RpcFuture.collectAll(List.of(pending, failing));
        assertThat(all.done()).isFalse();

        IllegalStateException failure = new IllegalStateException("down");
        failing.setException(failure);

        assertThat(all.done()).isTrue();
        assertThat(all.exceptionNow()).isSameAs(failure);
        pending.setResult(1);  // a later completion leaves the failed result alone
        assertThat(all.exceptionNow()).isSameAs(failure);
    }

    @Test
    void collectAllRejectsNulls() {
        assertThatThrownBy(() -> RpcFuture.collectAll(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> RpcFuture.collectAll(Arrays.asList(RpcFuture.completed(1), null)))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("futures[1]");
    }
}
