package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code then}, {@code addDoneCallback}, {@code thenApply}, {@code thenCompose}: ports of PyTorch's
 * test_callback_* tests, with futures completed on another thread instead of by an RPC.
 */
@Timeout(30)
class RpcFutureCallbackTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Completes {@code future} with {@code value} from a pool thread, as an RPC reply would. */
    private <T> void completeLater(RpcFuture<T> future, T value) {
        pool.execute(() -> future.setResult(value));
    }

    private void failLater(RpcFuture<?> future, Throwable failure) {
        pool.execute(() -> future.setException(failure));
    }

    /** test_callback_simple */
    @Test
    void callbackSimple() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        AtomicReference<Integer> seen = new AtomicReference<>();
        RpcFuture<Integer> child = fut.then(f -> {
            seen.set(f.value());
            return f.value() + 1;
        });
        completeLater(fut, 2);

        assertThat(fut.await(WAIT)).isEqualTo(2);
        assertThat(child.await(WAIT)).isEqualTo(3);
        assertThat(seen.get()).isEqualTo(2);
        assertThat(fut.await(WAIT)).isEqualTo(2);
    }

    /** test_callback_wrong_arg_num, adapted: a callback that throws fails the child, not the parent. */
    @Test
    void callbackThrowingFailsOnlyTheChild() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<Integer> child = fut.then(f -> {
            throw new IllegalArgumentException("my_function() missing 2 required positional arguments");
        });
        completeLater(fut, 2);

        assertThat(fut.await(WAIT)).isEqualTo(2);
        assertThatThrownBy(() -> child.await(WAIT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("missing 2 required positional arguments");
    }

    /** test_callback_wrong_arg_type, adapted: a callback misusing its argument fails the child. */
    @Test
    void callbackWithWrongArgumentTypeFailsTheChild() {
        RpcFuture<Object> fut = new RpcFuture<>();
        RpcFuture<Integer> child = fut.then(f -> (Integer) (Object) f + 1);
        completeLater(fut, "not a number");

        assertThatThrownBy(() -> child.await(WAIT)).isInstanceOf(ClassCastException.class);
    }

    /** test_callback_multi */
    @Test
    void tenCallbacksOnOneFuture() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        List<RpcFuture<Integer>> children = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            int add = i;
            children.add(fut.then(f -> f.value() + add));
        }
        completeLater(fut, 2);

        assertThat(fut.await(WAIT)).isEqualTo(2);
        for (int i = 0; i < 10; i++) {
            assertThat(children.get(i).await(WAIT)).isEqualTo(2 + i);
        }
    }

    /** test_callback_chain */
    @Test
    void twentyChainedCallbacks() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<Integer> last = fut;
        for (int i = 0; i < 20; i++) {
            last = last.then(f -> f.await() + 1);  // await() on a done future never blocks
        }
        completeLater(fut, 1);

        assertThat(last.await(WAIT)).isEqualTo(21);
    }

    @Test
    void veryLongChainRegisteredBeforeCompletionDoesNotOverflowTheStack() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<Integer> last = fut;
        for (int i = 0; i < 100_000; i++) {
            last = last.then(f -> f.value() + 1);
        }
        completeLater(fut, 0);

        assertThat(last.await(WAIT)).isEqualTo(100_000);
    }

    /** test_callback_with_error */
    @Test
    void callbackOnFailedFutureSeesTheErrorAndMayRaiseAnother() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        RpcFuture<Integer> child = fut.then(f -> {
            try {
                return f.await();
            } catch (IllegalArgumentException e) {
                seen.set(e);
                throw new IllegalStateException("Another expected error");
            }
        });
        failLater(fut, new IllegalArgumentException("Expected error"));

        assertThatThrownBy(() -> child.await(WAIT)).isInstanceOf(IllegalStateException.class)
                .hasMessage("Another expected error");
        assertThat(seen.get()).isInstanceOf(IllegalArgumentException.class).hasMessage("Expected error");
    }

    @Test
    void callbackIgnoringTheFailureCompletesTheChildNormally() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<String> child = fut.then(f -> f.failed() ? "handled" : "ok");
        failLater(fut, new IllegalArgumentException("Expected error"));

        assertThat(child.await(WAIT)).isEqualTo("handled");
    }

    @Test
    void callbackReadingAFailedRpcValueFailsTheChildWithThatCode() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<Integer> child = fut.then(RpcFuture::value);
        failLater(fut, new RpcException(RpcException.Code.TIMEOUT, "Call timed out"));

        RpcException thrown = catchThrowableOfType(RpcException.class, () -> child.await(WAIT));
        assertThat(thrown.code()).isEqualTo(RpcException.Code.TIMEOUT);
        assertThat(thrown).hasMessage("Call timed out");
    }

    @Test
    void callbackReturningAFutureDoesNotFlatten() {
        RpcFuture<Integer> inner = RpcFuture.completed(5);
        RpcFuture<RpcFuture<Integer>> child = RpcFuture.completed(1).then(f -> inner);
        assertThat(child.value()).isSameAs(inner);
    }

    /** test_callback_none, adapted: a null callback is rejected with a clear message. */
    @Test
    void nullCallbackIsRejected() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        assertThatThrownBy(() -> fut.then(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("then(): callback must not be null");
        assertThatThrownBy(() -> fut.addDoneCallback(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("callback must not be null");
        assertThatThrownBy(() -> fut.thenApply(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> fut.thenCompose(null)).isInstanceOf(NullPointerException.class);
    }

    /** test_add_done_callback */
    @Test
    void addDoneCallbackRunsAndLeavesTheValue() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        AtomicBoolean called = new AtomicBoolean();
        fut.addDoneCallback(f -> called.set(true));
        // A later then() is ordered after the done-callback, so its child observes the flag.
        RpcFuture<Boolean> observed = fut.then(f -> called.get());
        completeLater(fut, 2);

        assertThat(observed.await(WAIT)).isTrue();
        assertThat(fut.await(WAIT)).isEqualTo(2);
    }

    @Test
    void addDoneCallbackExceptionIsSwallowedAndLaterCallbacksStillRun() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        fut.addDoneCallback(f -> {
            throw new IllegalStateException("cb fail");
        });
        RpcFuture<Integer> child = fut.then(f -> f.value() * 10);
        fut.setResult(4);  // must not throw

        assertThat(fut.value()).isEqualTo(4);
        assertThat(child.value()).isEqualTo(40);
        // Added after completion, runs inline; the exception is swallowed here as well.
        fut.addDoneCallback(f -> {
            throw new IllegalStateException("cb fail");
        });
    }

    @Test
    void callbacksRunInRegistrationOrder() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        List<Integer> order = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            if (i % 2 == 0) {
                fut.addDoneCallback(f -> order.add(n));
            } else {
                fut.then(f -> order.add(n));
            }
        }
        completeLater(fut, 0);
        fut.await(WAIT);
        // The last callback may still be running on the completing thread: wait for it via a new one.
        RpcFuture<Boolean> after = fut.then(f -> order.add(99));
        after.await(WAIT);

        assertThat(order).containsExactly(0, 1, 2, 3, 4, 99);
    }

    @Test
    void callbackOnCompleteFutureRunsInlineOnTheCallingThread() {
        RpcFuture<Integer> fut = RpcFuture.completed(1);
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        RpcFuture<Integer> child = fut.then(f -> {
            ranOn.set(Thread.currentThread());
            return 2;
        });
        assertThat(ranOn.get()).isSameAs(caller);
        assertThat(child.done()).isTrue();
        assertThat(child.value()).isEqualTo(2);
    }

    @Test
    void callbackOnPendingFutureRunsOnTheCompletingThread() throws Exception {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<Thread> ranOn = fut.then(f -> Thread.currentThread());
        Thread completer = pool.submit(() -> {
            fut.setResult(1);
            return Thread.currentThread();
        }).get(10, TimeUnit.SECONDS);

        assertThat(ranOn.await(WAIT)).isSameAs(completer);
    }

    @Test
    void callbackRegisteredFromACallbackRunsAfterTheCurrentOnes() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        List<String> order = new ArrayList<>();
        fut.addDoneCallback(f -> {
            order.add("first");
            f.addDoneCallback(g -> order.add("added by first"));
        });
        fut.addDoneCallback(f -> order.add("second"));
        fut.setResult(1);

        assertThat(order).containsExactly("first", "second", "added by first");
    }

    @Test
    void thenApplyMapsValuesAndPassesFailuresThrough() {
        RpcFuture<String> name = new RpcFuture<>();
        RpcFuture<Integer> length = name.thenApply(String::length);
        completeLater(name, "ferry");
        assertThat(length.await(WAIT)).isEqualTo(5);

        IllegalStateException failure = new IllegalStateException("down");
        AtomicBoolean mapperCalled = new AtomicBoolean();
        RpcFuture<Integer> failed = RpcFuture.<String>failed(failure).thenApply(s -> {
            mapperCalled.set(true);
            return s.length();
        });
        assertThat(failed.exceptionNow()).isSameAs(failure);
        assertThat(mapperCalled).isFalse();

        RpcFuture<Integer> throwing = RpcFuture.completed("x").thenApply(s -> {
            throw new UnsupportedOperationException("no");
        });
        assertThat(throwing.exceptionNow()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void thenComposeFlattens() {
        RpcFuture<Integer> first = new RpcFuture<>();
        RpcFuture<Integer> second = new RpcFuture<>();
        RpcFuture<Integer> both = first.thenCompose(v -> second.thenApply(w -> v + w));
        completeLater(first, 1);
        assertThat(first.await(WAIT)).isEqualTo(1);
        assertThat(both.done()).isFalse();
        completeLater(second, 10);

        assertThat(both.await(WAIT)).isEqualTo(11);
    }

    @Test
    void thenComposeFailures() {
        IllegalStateException parentFailure = new IllegalStateException("parent");
        Function<Integer, RpcFuture<Integer>> unused = v -> {
            throw new AssertionError("must not run");
        };
        assertThat(RpcFuture.<Integer>failed(parentFailure).thenCompose(unused).exceptionNow()).isSameAs(parentFailure);

        IllegalStateException innerFailure = new IllegalStateException("inner");
        RpcFuture<Integer> inner = new RpcFuture<>();
        RpcFuture<Integer> composed = RpcFuture.completed(1).thenCompose(v -> inner);
        failLater(inner, innerFailure);
        assertThatThrownBy(() -> composed.await(WAIT)).isSameAs(innerFailure);

        RpcFuture<Integer> throwing = RpcFuture.completed(1).thenCompose(v -> {
            throw new IllegalArgumentException("bad step");
        });
        assertThat(throwing.exceptionNow()).isInstanceOf(IllegalArgumentException.class).hasMessage("bad step");

        RpcFuture<Integer> returningNull = RpcFuture.completed(1).thenCompose(v -> null);
        assertThat(returningNull.exceptionNow()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("returned null");
    }

    @Test
    void userCompletingTheChildFirstWins() {
        RpcFuture<Integer> fut = new RpcFuture<>();
        RpcFuture<Integer> child = fut.then(f -> 1);
        child.setResult(99);
        fut.setResult(0);
        assertThat(child.value()).isEqualTo(99);
    }
}
