package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ports of PyTorch's test_wait_all* tests for the {@code _wait_all()} context manager. */
@Timeout(30)
class WaitAllScopeTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() throws InterruptedException {
        assertThat(WaitAllScope.current()).as("scope leaked into the test thread").isNull();
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Stands for the agent's rpcAsync: a future completed by another thread, registered here. */
    private RpcFuture<Integer> asyncCall(int value) {
        RpcFuture<Integer> future = new RpcFuture<>();
        WaitAllScope.register(future);
        pool.execute(() -> future.setResult(value));
        return future;
    }

    private RpcFuture<Integer> failingAsyncCall(String message) {
        RpcFuture<Integer> future = new RpcFuture<>();
        WaitAllScope.register(future);
        pool.execute(() -> future.setException(new IllegalArgumentException(message)));
        return future;
    }

    /** test_wait_all */
    @Test
    void recordsFuturesAndWaitsForThemOnClose() {
        RpcFuture<Integer> future;
        try (WaitAllScope scope = WaitAllScope.open()) {
            assertThat(scope.futures()).isEmpty();
            assertThat(WaitAllScope.current()).isSameAs(scope);
            future = asyncCall(3);
            assertThat(scope.futures()).containsExactly(future);
        }
        assertThat(future.done()).isTrue();
        assertThat(future.value()).isEqualTo(3);
        assertThat(WaitAllScope.current()).isNull();
    }

    /** test_wait_all_multiple_call: only the async calls are recorded. */
    @Test
    void recordsOnlyRegisteredFutures() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        try (WaitAllScope scope = WaitAllScope.open()) {
            for (int i = 0; i < 20; i++) {
                futures.add(asyncCall(i));
                RpcFuture<Integer> sync = new RpcFuture<>();  // rpcSync: waited at once, never registered
                pool.execute(() -> sync.setResult(-1));
                sync.await();
            }
            assertThat(scope.futures()).hasSize(20).containsExactlyElementsOf(futures);
        }
        for (int i = 0; i < 20; i++) {
            assertThat(futures.get(i).value()).isEqualTo(i);
        }
    }

    /** test_wait_all_raise_in_user_func */
    @Test
    void closeThrowsTheFirstFailureAndClearsTheThread() {
        Throwable thrown = catchThrowable(() -> {
            try (WaitAllScope scope = WaitAllScope.open()) {
                asyncCall(1);
                failingAsyncCall("Expected error");
            }
        });
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error");
        assertThat(WaitAllScope.current()).isNull();
    }

    /** test_wait_all_raise_in_body: the futures are still waited for. */
    @Test
    void bodyExceptionPropagatesAfterTheFuturesAreWaitedFor() {
        List<RpcFuture<Integer>> started = new ArrayList<>();
        Throwable thrown = catchThrowable(() -> {
            try (WaitAllScope scope = WaitAllScope.open()) {
                started.add(asyncCall(5));
                throw new IllegalArgumentException("Expected error");
            }
        });
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error")
                .hasNoSuppressedExceptions();
        assertThat(started).singleElement().matches(RpcFuture::done);
        assertThat(WaitAllScope.current()).isNull();
    }

    @Test
    void waitFailureIsSuppressedUnderTheBodyException() {
        Throwable thrown = catchThrowable(() -> {
            try (WaitAllScope scope = WaitAllScope.open()) {
                failingAsyncCall("wait failure");
                throw new IllegalStateException("body failure");
            }
        });
        assertThat(thrown).isInstanceOf(IllegalStateException.class).hasMessage("body failure");
        assertThat(thrown.getSuppressed()).singleElement()
                .isInstanceOf(IllegalArgumentException.class)
                .extracting(Throwable::getMessage).isEqualTo("wait failure");
        assertThat(WaitAllScope.current()).isNull();
    }

    @Test
    void registerWithoutScopeRecordsNothing() {
        assertThat(WaitAllScope.register(RpcFuture.completed(1))).isFalse();
        assertThatThrownBy(() -> WaitAllScope.register(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void futuresRegisteredOnOtherThreadsAreNotRecorded() throws Exception {
        try (WaitAllScope scope = WaitAllScope.open()) {
            boolean recorded = pool.submit(() -> WaitAllScope.register(new RpcFuture<Integer>()))
                    .get(10, TimeUnit.SECONDS);
            assertThat(recorded).isFalse();
            assertThat(scope.futures()).isEmpty();
        }
    }

    @Test
    void nestedScopesRecordInTheInnermostAndRestoreTheOuter() {
        try (WaitAllScope outer = WaitAllScope.open()) {
            RpcFuture<Integer> first = asyncCall(1);
            RpcFuture<Integer> inner1;
            try (WaitAllScope inner = WaitAllScope.open()) {
                assertThat(WaitAllScope.current()).isSameAs(inner);
                inner1 = asyncCall(2);
                assertThat(inner.futures()).containsExactly(inner1);
            }
            assertThat(inner1.done()).isTrue();
            assertThat(WaitAllScope.current()).isSameAs(outer);
            RpcFuture<Integer> second = asyncCall(3);
            assertThat(outer.futures()).containsExactly(first, second);
        }
    }

    @Test
    void closingOutOfOrderThrowsAndChangesNothing() {
        WaitAllScope outer = WaitAllScope.open();
        WaitAllScope inner = WaitAllScope.open();
        try {
            assertThatThrownBy(outer::close).isInstanceOf(RpcException.class)
                    .hasMessageContaining("reverse order")
                    .extracting(e -> ((RpcException) e).code()).isEqualTo(RpcException.Code.ILLEGAL_STATE);
            assertThat(WaitAllScope.current()).isSameAs(inner);
        } finally {
            inner.close();
            outer.close();
        }
    }

    @Test
    void closingOnAnotherThreadThrows() throws Exception {
        try (WaitAllScope scope = WaitAllScope.open()) {
            Throwable thrown = pool.submit(() -> catchThrowable(scope::close)).get(10, TimeUnit.SECONDS);
            assertThat(thrown).isInstanceOf(RpcException.class).hasMessageContaining("cannot be closed on thread");
            assertThat(WaitAllScope.current()).isSameAs(scope);
        }
    }

    @Test
    void closeTwiceIsANoOp() {
        WaitAllScope scope = WaitAllScope.open();
        asyncCall(1);
        scope.close();
        scope.close();
        assertThat(scope.toString()).isEqualTo("WaitAllScope[1 futures, closed]");
    }
}
