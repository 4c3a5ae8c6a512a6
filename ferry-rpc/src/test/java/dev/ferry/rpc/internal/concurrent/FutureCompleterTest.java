package dev.ferry.rpc.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;

@Timeout(30)
class FutureCompleterTest {

    @Test
    void firstCompletionWinsOthersReportFalse() {
        RpcFuture<String> future = new RpcFuture<>();
        assertThat(FutureCompleter.tryComplete(future, "reply")).isTrue();
        assertThat(FutureCompleter.tryComplete(future, "again")).isFalse();
        assertThat(FutureCompleter.tryFail(future, new RpcException(RpcException.Code.TIMEOUT, "late"))).isFalse();
        assertThat(future.value()).isEqualTo("reply");

        RpcFuture<String> failed = new RpcFuture<>();
        RpcException shutdown = new RpcException(RpcException.Code.SHUTDOWN, "agent shut down");
        assertThat(FutureCompleter.tryFail(failed, shutdown)).isTrue();
        assertThat(FutureCompleter.tryComplete(failed, "reply")).isFalse();
        assertThat(failed.exceptionNow()).isSameAs(shutdown);
    }

    @Test
    void rejectsNullsAndASecondAccess() {
        assertThatThrownBy(() -> FutureCompleter.tryComplete(null, 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> FutureCompleter.tryFail(new RpcFuture<>(), null)).isInstanceOf(NullPointerException.class);
        RpcFuture.completed(0);  // makes sure the access is installed
        assertThatThrownBy(() -> FutureCompleter.setAccess(null)).isInstanceOf(IllegalStateException.class);
    }

    /** A reply, a timeout and a shutdown racing: exactly one wins, callbacks run exactly once. */
    @Test
    void racingCompletionsHaveExactlyOneWinner() throws Exception {
        ExecutorService racers = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 500; round++) {
                RpcFuture<String> future = new RpcFuture<>();
                AtomicInteger callbackRuns = new AtomicInteger();
                future.addDoneCallback(f -> callbackRuns.incrementAndGet());
                CountDownLatch start = new CountDownLatch(1);
                List<Future<Boolean>> results = new ArrayList<>();
                results.add(racers.submit(() -> start.await(10, TimeUnit.SECONDS)
                        && FutureCompleter.tryComplete(future, "reply")));
                results.add(racers.submit(() -> start.await(10, TimeUnit.SECONDS)
                        && FutureCompleter.tryFail(future, new RpcException(RpcException.Code.TIMEOUT, "timeout"))));
                results.add(racers.submit(() -> start.await(10, TimeUnit.SECONDS)
                        && FutureCompleter.tryFail(future, new RpcException(RpcException.Code.SHUTDOWN, "shutdown"))));
                start.countDown();
                int winners = 0;
                for (Future<Boolean> result : results) {
                    winners += result.get(10, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertThat(winners).isEqualTo(1);
                assertThat(future.done()).isTrue();
                assertThat(callbackRuns.get()).isEqualTo(1);
            }
        } finally {
            racers.shutdownNow();
        }
    }
}
