package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @AsyncExecution} functions on every call kind: through {@link Async#value} the caller gets
 * the future's value, typed as such at compile time (the assignments below are the test); without
 * it, the declared future's type, completed.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AsyncExecutionValuesTest {
    private LocalCluster cluster;

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @Test
    void throughAsyncValueEveryCallKindGivesTheFuturesValue() {
        RpcAgent zero = cluster.agent(0);
        for (String on : new String[] {"worker0", "worker1"}) {
            int synced = zero.rpcSync(on, Async.value(Ops::asyncChained), "worker2", 10);
            RpcFuture<Integer> later = zero.rpcAsync(on, Async.value(Ops::asyncChained), "worker2", 20);
            RRef<Integer> kept = zero.remote(on, Async.value(Ops::asyncChained), "worker2", 30);
            int throughTarget = zero.to(on).rpcSync(Async.value(Ops::asyncRelay), "worker2", 7);

            assertThat(synced).isEqualTo(13);
            assertThat(later.await()).isEqualTo(23);
            assertThat(kept.toHere()).isEqualTo(33);
            assertThat(throughTarget).isEqualTo(7);
        }
    }

    @Test
    void onAnRRefsValueToo() {
        RRef<Counter> counter = cluster.agent(0).remote("worker1", Counter::new, 0);
        RRef<Counter> other = cluster.agent(0).remote("worker2", Counter::new, 100);

        // One call at a time: two calls in flight to the same owner may run in either order.
        int here = counter.rpcSync(Async.value(Counter::addThenForward), other, 5);
        assertThat(here).isEqualTo(105);
        RpcFuture<Integer> async = counter.rpcAsync(Async.value(Counter::addThenForward), other, 5);
        assertThat(async.await()).isEqualTo(110);
        RRef<Integer> kept = counter.remote(Async.value(Counter::addThenForward), other, 5);
        assertThat(kept.toHere()).isEqualTo(115);
        assertThat(counter.rpcSync(Counter::value)).isEqualTo(15);
    }

    @Test
    void aFailingAsyncFunctionFailsEachCallKindWithTheRemoteError() {
        RpcAgent zero = cluster.agent(0);
        java.util.function.Consumer<RpcException> fromWorker1 = e -> {
            assertThat(e.workerName()).isEqualTo("worker1");
            assertThat(e.remoteClassName()).isEqualTo(IllegalStateException.class.getName());
            assertThat(e.remoteMessage()).isEqualTo("Expected error");
        };
        assertThatThrownBy(() -> zero.rpcSync("worker1", Async.value(Ops::asyncRaise)))
                .isInstanceOfSatisfying(RpcException.class, fromWorker1);
        assertThatThrownBy(zero.rpcAsync("worker1", Async.value(Ops::asyncRaise))::await)
                .isInstanceOfSatisfying(RpcException.class, fromWorker1);
        assertThatThrownBy(zero.remote("worker1", Async.value(Ops::asyncRaise))::toHere)
                .isInstanceOfSatisfying(RpcException.class, fromWorker1);
        // a future that fails later, on a third worker: the caller learns the failure and its text
        assertThatThrownBy(() -> zero.rpcSync("worker1", Async.value(Ops::asyncFailLater), "worker2"))
                .isInstanceOf(RpcException.class).hasMessageContaining("failed later");
    }

    @Test
    void calledLocallyTheWrapperWaitsForTheFuture() throws Exception {
        RpcFunction1<String, String> stage = Async.value(s -> RpcFuture.completed(s + "?"));
        assertThat(stage.call("ok")).isEqualTo("ok?");
    }

    @Test
    void withoutAsyncValueTheDeclaredFutureComesBackCompleted() {
        RpcAgent zero = cluster.agent(0);
        RpcFuture<Integer> declared = zero.rpcSync("worker1", Ops::asyncRelay, "worker2", 11);
        CompletionStage<String> stage = zero.rpcSync("worker2", Ops::asyncStage, "done");

        assertThat(declared.done()).isTrue();
        assertThat(declared.await()).isEqualTo(11);
        assertThat(stage.toCompletableFuture().join()).isEqualTo("done!");
    }

    @Test
    void remoteOfAFutureTypedFunctionIsRefusedSayingWhatToDo() {
        assertThatThrownBy(() -> cluster.agent(0).remote("worker1", Ops::asyncStage, "x"))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("remote() of Ops::asyncStage, which returns a future")
                .hasMessageContaining("Async.value");
    }
}
