package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;

/**
 * Blocking on an incomplete future from a transport thread throws at once instead of
 * deadlocking: Netty's {@code DefaultPromise.checkDeadLock}.
 */
@Timeout(30)
class RpcFutureDeadlockGuardTest {
    private final ExecutorService transport =
            Executors.newSingleThreadExecutor(NonBlockingThreads.factory("test-transport"));

    @AfterEach
    void stopTransport() throws InterruptedException {
        transport.shutdownNow();
        assertThat(transport.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Runs {@code action} on the transport thread; returns what it threw, or null. */
    private Throwable thrownOnTransport(Callable<?> action) throws Exception {
        return transport.submit(() -> {
            try {
                action.call();
                return null;
            } catch (Throwable t) {
                return t;
            }
        }).get(10, TimeUnit.SECONDS);
    }

    private static void assertDeadlockRefusal(Throwable thrown) {
        assertThat(thrown).isInstanceOf(RpcException.class)
                .hasMessageContaining("would deadlock the transport")
                .hasMessageContaining("then() or addDoneCallback()")
                .hasMessageContaining("test-transport-1");
        assertThat(((RpcException) thrown).code()).isEqualTo(RpcException.Code.ILLEGAL_STATE);
    }

    @Test
    void awaitOnTransportThreadThrowsAtOnce() throws Exception {
        RpcFuture<Integer> neverCompleted = new RpcFuture<>();
        long start = System.nanoTime();
        assertDeadlockRefusal(thrownOnTransport(neverCompleted::await));
        assertDeadlockRefusal(thrownOnTransport(() -> neverCompleted.await(Duration.ofHours(1))));
        assertDeadlockRefusal(thrownOnTransport(() -> RpcFuture.waitAll(List.of(neverCompleted))));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(neverCompleted.done()).isFalse();
    }

    @Test
    void waitAllScopeCloseOnTransportThreadThrowsAtOnce() throws Exception {
        RpcFuture<Integer> neverCompleted = new RpcFuture<>();
        Throwable thrown = thrownOnTransport(() -> {
            try (WaitAllScope scope = WaitAllScope.open()) {
                WaitAllScope.register(neverCompleted);
            }
            return null;
        });
        assertDeadlockRefusal(thrown);
        assertThat(transport.submit(WaitAllScope::current).get(10, TimeUnit.SECONDS)).isNull();
    }

    @Test
    void completedFuturesMayBeReadOnTransportThread() throws Exception {
        RpcFuture<Integer> done = RpcFuture.completed(5);
        assertThat(transport.submit(() -> done.await()).get(10, TimeUnit.SECONDS)).isEqualTo(5);
        assertThat(transport.submit(() -> done.await(Duration.ZERO)).get(10, TimeUnit.SECONDS)).isEqualTo(5);
        assertThat(transport.submit(done::value).get(10, TimeUnit.SECONDS)).isEqualTo(5);
        assertThat(transport.submit(() -> RpcFuture.waitAll(List.of(done))).get(10, TimeUnit.SECONDS))
                .containsExactly(5);
    }

    @Test
    void callbackCompletedOnTransportThreadMayAwaitItsArgument() throws Exception {
        RpcFuture<Integer> reply = new RpcFuture<>();
        RpcFuture<Integer> plusOne = reply.then(f -> f.await() + 1);
        transport.submit(() -> reply.setResult(1)).get(10, TimeUnit.SECONDS);
        assertThat(plusOne.await(Duration.ofSeconds(10))).isEqualTo(2);
    }

    @Test
    void ordinaryThreadsMayBlock() {
        assertThat(NonBlockingThreads.currentIsNonBlocking()).isFalse();
        RpcFuture<Integer> future = new RpcFuture<>();
        transport.execute(() -> future.setResult(9));
        assertThat(future.await(Duration.ofSeconds(10))).isEqualTo(9);
    }
}
