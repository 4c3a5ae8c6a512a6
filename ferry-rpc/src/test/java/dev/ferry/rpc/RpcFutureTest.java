package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** State, waiting and completion of {@link RpcFuture}; ports of PyTorch's done/mark-twice tests. */
@Timeout(30)
class RpcFutureTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** test_future_done */
    @Test
    void doneAfterAwait() {
        RpcFuture<Integer> future = new RpcFuture<>();
        assertThat(future.done()).isFalse();
        pool.execute(() -> future.setResult(3));
        assertThat(future.await(WAIT)).isEqualTo(3);
        assertThat(future.done()).isTrue();
        assertThat(future.failed()).isFalse();
    }

    /** test_future_done_exception */
    @Test
    void doneAfterFailure() {
        RpcFuture<Integer> future = new RpcFuture<>();
        pool.execute(() -> future.setException(new IllegalArgumentException("Expected error")));
        assertThatThrownBy(() -> future.await(WAIT))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error");
        assertThat(future.done()).isTrue();
        assertThat(future.failed()).isTrue();
    }

    /** test_mark_future_twice */
    @Test
    void markTwiceThrows() {
        RpcFuture<Integer> future = new RpcFuture<>();
        pool.execute(() -> future.setResult(1));
        assertThat(future.await(WAIT)).isEqualTo(1);

        RpcException second = catchThrowableOfType(RpcException.class, () -> future.setResult(2));
        assertThat(second.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE);
        assertThat(second).hasMessageContaining("Future can only be marked completed once");
        assertThatThrownBy(() -> future.setException(new RuntimeException("late")))
                .isInstanceOf(RpcException.class).hasMessageContaining("Future can only be marked completed once");
        assertThat(future.value()).isEqualTo(1);
    }

    @Test
    void markTwiceAfterFailureThrowsAndKeepsFailure() {
        RpcFuture<Integer> future = RpcFuture.failed(new IllegalStateException("first"));
        assertThatThrownBy(() -> future.setResult(1)).isInstanceOf(RpcException.class)
                .hasMessageContaining("only be marked completed once");
        assertThatThrownBy(future::value).isInstanceOf(IllegalStateException.class).hasMessage("first");
    }

    @Test
    void awaitRethrowsTheSameUncheckedFailureEveryTime() {
        IllegalArgumentException failure = new IllegalArgumentException("Expected error");
        RpcFuture<Integer> future = RpcFuture.failed(failure);
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(future::await).isSameAs(failure);
            assertThatThrownBy(future::value).isSameAs(failure);
        }
        assertThat(future.exceptionNow()).isSameAs(failure);
    }

    @Test
    void awaitThrowsAFreshRpcExceptionCausedByTheStoredOne() {
        RpcException stored = RpcException.remote("worker1", "java.lang.ArithmeticException", "/ by zero",
                new RemoteStackTrace("java.lang.ArithmeticException", "/ by zero", new StackTraceElement[0], null));
        RpcFuture<Integer> future = RpcFuture.failed(stored);

        RpcException first = catchThrowableOfType(RpcException.class, future::await);
        RpcException second = catchThrowableOfType(RpcException.class, future::value);
        for (RpcException thrown : new RpcException[] {first, second}) {
            assertThat(thrown).isNotSameAs(stored).hasCause(stored).hasMessage(stored.getMessage());
            assertThat(thrown.getCause()).isSameAs(stored);
            assertThat(thrown.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
            assertThat(thrown.workerName()).isEqualTo("worker1");
            assertThat(thrown.remoteClassName()).isEqualTo("java.lang.ArithmeticException");
            assertThat(thrown.remoteMessage()).isEqualTo("/ by zero");
        }
        assertThat(first).isNotSameAs(second);
        assertThat(future.exceptionNow()).isSameAs(stored);
    }

    @Test
    void checkedFailureIsWrappedAsInternal() {
        IOException failure = new IOException("disk");
        RpcFuture<Integer> future = new RpcFuture<>();
        future.setException(failure);
        RpcException thrown = catchThrowableOfType(RpcException.class, future::await);
        assertThat(thrown.code()).isEqualTo(RpcException.Code.INTERNAL);
        assertThat(thrown.getCause()).isSameAs(failure);
        assertThat(future.exceptionNow()).isSameAs(failure);
    }

    @Test
    void errorIsRethrownAsIs() {
        AssertionError failure = new AssertionError("boom");
        RpcFuture<Integer> future = RpcFuture.failed(failure);
        assertThatThrownBy(future::await).isSameAs(failure);
    }

    @Test
    void valueBeforeDoneIsIllegalState() {
        RpcFuture<Integer> future = new RpcFuture<>();
        RpcException thrown = catchThrowableOfType(RpcException.class, future::value);
        assertThat(thrown.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE);
        assertThat(thrown).hasMessageContaining("not done");
        assertThatThrownBy(future::exceptionNow).isInstanceOf(RpcException.class);
        assertThatThrownBy(RpcFuture.completed(1)::exceptionNow).isInstanceOf(RpcException.class)
                .hasMessageContaining("completed with a value");
    }

    @Test
    void awaitTimeoutThrowsTimeoutAndLeavesFutureIncomplete() {
        RpcFuture<Integer> future = new RpcFuture<>();
        long start = System.nanoTime();
        RpcException thrown = catchThrowableOfType(RpcException.class, () -> future.await(Duration.ofMillis(50)));
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(50).toNanos());
        assertThat(thrown.code()).isEqualTo(RpcException.Code.TIMEOUT);
        assertThat(future.done()).isFalse();

        future.setResult(7);
        assertThat(future.await(Duration.ofMillis(50))).isEqualTo(7);
    }

    @Test
    void zeroOrHugeTimeouts() {
        RpcFuture<Integer> pending = new RpcFuture<>();
        assertThatThrownBy(() -> pending.await(Duration.ZERO)).isInstanceOf(RpcException.class)
                .extracting(e -> ((RpcException) e).code()).isEqualTo(RpcException.Code.TIMEOUT);
        assertThatThrownBy(() -> pending.await(Duration.ofSeconds(-1))).isInstanceOf(RpcException.class);
        assertThat(RpcFuture.completed(5).await(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(5);
        assertThat(RpcFuture.completed(5).await(Duration.ZERO)).isEqualTo(5);
    }

    @Test
    void awaitWithoutTimeoutReturnsValueSetByAnotherThread() throws InterruptedException {
        RpcFuture<String> future = new RpcFuture<>();
        CountDownLatch waiting = new CountDownLatch(1);
        pool.execute(() -> {
            try {
                waiting.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            future.setResult("hello");
        });
        waiting.countDown();
        assertThat(future.await()).isEqualTo("hello");
    }

    @Test
    void interruptedAwaitRestoresFlagAndThrows() {
        RpcFuture<Integer> future = new RpcFuture<>();
        Thread.currentThread().interrupt();
        try {
            RpcException thrown = catchThrowableOfType(RpcException.class, future::await);
            assertThat(thrown.code()).isEqualTo(RpcException.Code.INTERNAL);
            assertThat(thrown).hasCauseInstanceOf(InterruptedException.class).hasMessageContaining("Interrupted");
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
            assertThat(future.done()).isFalse();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void interruptedAwaitOnDoneFutureStillReturnsValue() {
        Thread.currentThread().interrupt();
        try {
            assertThat(RpcFuture.completed(1).await()).isEqualTo(1);
        } finally {
            assertThat(Thread.interrupted()).isTrue();
        }
    }

    @Test
    void nullValueIsAValue() {
        RpcFuture<String> future = new RpcFuture<>();
        future.setResult(null);
        assertThat(future.done()).isTrue();
        assertThat(future.failed()).isFalse();
        assertThat(future.await()).isNull();
    }

    @Test
    void nullArgumentsAreRejected() {
        RpcFuture<String> future = new RpcFuture<>();
        assertThatThrownBy(() -> future.setException(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> future.await(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> RpcFuture.failed(null)).isInstanceOf(NullPointerException.class);
        assertThat(future.done()).isFalse();
    }

    @Test
    void toStringShowsState() {
        RpcFuture<Integer> future = new RpcFuture<>();
        assertThat(future.toString()).startsWith("RpcFuture@").endsWith("[Incomplete]");
        future.addDoneCallback(f -> { });
        assertThat(future.toString()).endsWith("[Incomplete, 1 callbacks]");
        future.setResult(1);
        assertThat(future.toString()).endsWith("[Completed normally]");
        assertThat(RpcFuture.failed(new IllegalStateException("bad")).toString())
                .endsWith("[Completed exceptionally: java.lang.IllegalStateException: bad]");
    }
}
