package dev.ferry.rpc;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.CallTimeline;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bound functions (tensorplay's {@code method_factory} / {@code new_method}): resolved once on the
 * worker, then called through every call kind, carrying a handle instead of the function's reference.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BoundMethodsTest {
    private LocalCluster cluster;
    private RpcAgent caller;

    public static int sumOfFive(int a, int b, int c, int d, int e) {
        return a + b + c + d + e;
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3);
        caller = cluster.agent(0);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private static int boundOn(RpcAgent agent) {
        return Integer.parseInt(agent.getDebugInfo().get("agent.bound_functions"));
    }

    @Test
    void aBoundFunctionAnswersEveryCallKind() {
        RemoteMethod2<Integer, Integer, Integer> add = caller.to("worker1").method(Ops::add);

        assertThat(add.worker().name()).isEqualTo("worker1");
        assertThat(add.rpcSync(3, 4)).isEqualTo(7);
        assertThat(add.rpcAsync(5, 6).await()).isEqualTo(11);
        try (RRef<Integer> kept = add.remote(1, 2)) {
            assertThat(kept.ownerName()).isEqualTo("worker1");
            assertThat(kept.toHere()).isEqualTo(3);
        }
        assertThat(caller.to("worker2").method(Ops::whoAmI).rpcSync()).isEqualTo("worker2");
        assertThat(caller.to(1).method(BoundMethodsTest::sumOfFive).rpcSync(1, 2, 3, 4, 5)).isEqualTo(15);
        assertThat(caller.to(caller.getWorkerInfo()).method(Ops::whoAmI).rpcSync()).isEqualTo("worker0");
    }

    @Test
    void theWorkerResolvesTheFunctionOnceAndItsCallsCarryAHandle() {
        RpcAgent callee = cluster.agent(2);
        Sizes sizes = new Sizes();
        RemoteMethod2<String, String, String> concat;
        try (AutoCloseable observing = caller.addCallObserver(sizes)) {
            int before = boundOn(callee);
            concat = caller.to("worker2").method(Ops::concat);
            assertThat(boundOn(callee)).isEqualTo(before + 1);
            // binding the same function again, from here or another worker, gives the same handle
            caller.to("worker2").method(Ops::concat);
            cluster.agent(1).to("worker2").method(Ops::concat);
            assertThat(boundOn(callee)).isEqualTo(before + 1);

            for (int i = 0; i < 3; i++) {
                assertThat(concat.rpcSync("ab", "cd")).isEqualTo("abcd");
                assertThat(caller.rpcSync("worker2", Ops::concat, "ab", "cd")).isEqualTo("abcd");
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        // identical calls but for the function: class, method and descriptor (~40 bytes) replaced by a handle
        List<Long> bound = sizes.of(0, 2, 4);
        List<Long> byReference = sizes.of(1, 3, 5);
        assertThat(bound).containsOnly(bound.get(0));
        assertThat(byReference).containsOnly(byReference.get(0));
        assertThat(bound.get(0)).isLessThanOrEqualTo(byReference.get(0) - 30);
        assertThat(concat.toString()).contains("Ops::concat on worker2 (handle ");
    }

    @Test
    void aFunctionTheWorkerMayNotRunFailsWhenItIsBoundNotWhenItIsCalled() {
        int before = boundOn(cluster.agent(1));
        RpcFunction1<String, String> getenv = System::getenv;

        assertThatThrownBy(() -> caller.to("worker1").method(getenv))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION))
                .hasMessageContaining("java.lang.System");
        assertThat(boundOn(cluster.agent(1))).isEqualTo(before);
    }

    @Test
    void aMethodBoundToAnRRefsValueRunsWhereTheValueLives() throws Exception {
        try (RRef<Counter> counter = caller.to("worker1").remote(Counter::new, 0)) {
            RemoteMethod1<Integer, Integer> add = counter.method(Counter::add);
            RemoteMethod0<String> where = counter.method(Counter::where);
            RemoteMethod5<Integer, Integer, Integer, Integer, Integer, Integer> addFive = counter.method(Counter::addFive);

            ExecutorService threads = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> running = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    running.add(threads.submit(() -> {
                        for (int i = 0; i < 50; i++) {
                            add.rpcSync(1);
                        }
                    }));
                }
                for (Future<?> future : running) {
                    future.get();
                }
            } finally {
                threads.shutdownNow();
            }
            assertThat(counter.rpcSync(Counter::value)).isEqualTo(200);
            assertThat(add.rpcAsync(10).await()).isEqualTo(210);
            assertThat(addFive.rpcSync(1, 1, 1, 1, 1)).isEqualTo(215);
            assertThat(where.rpcSync()).isEqualTo("worker1");
            try (RRef<Integer> sum = add.remote(5)) {
                assertThat(sum.ownerName()).isEqualTo("worker1");
                assertThat(sum.toHere()).isEqualTo(220);
            }
            assertThat(counter.withTimeout(Duration.ofSeconds(20)).method(Counter::value).rpcSync()).isEqualTo(220);
        }
    }

    @Test
    void anAsyncFunctionGivesItsValueAndACapturingLambdaItsCapturedValues() {
        RemoteMethod2<String, Integer, Integer> chained = caller.to("worker1").method(Async.value(Ops::asyncChained));
        assertThat(chained.rpcSync("worker2", 10)).isEqualTo(13);
        assertThat(chained.rpcAsync("worker2", 20).await()).isEqualTo(23);
        try (RRef<Integer> kept = chained.remote("worker2", 30)) {
            assertThat(kept.toHere()).isEqualTo(33);
        }

        int offset = 100;
        RemoteMethod1<Integer, Integer> plus = caller.to("worker1").method((Integer x) -> x + offset);
        assertThat(plus.rpcSync(1)).isEqualTo(101);
        assertThat(plus.rpcSync(2)).isEqualTo(102);
    }

    @Test
    void errorsAndTimeoutsAreThoseOfTheSameCallUnbound() {
        RemoteMethod1<String, Integer> fail = caller.to("worker1").method(Ops::fail);
        assertThatThrownBy(() -> fail.rpcSync("boom"))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
                    assertThat(e.remoteClassName()).isEqualTo(IllegalArgumentException.class.getName());
                    assertThat(e.remoteMessage()).isEqualTo("boom");
                    assertThat(e.workerName()).isEqualTo("worker1");
                });
        RRef<Integer> failed = fail.remote("later");
        assertThatThrownBy(failed::toHere).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.remoteMessage()).isEqualTo("later"));

        RemoteMethod1<Long, Long> sleep = caller.to("worker1").method(Ops::sleepMillis)
                .withTimeout(Duration.ofMillis(100));
        assertThatThrownBy(() -> sleep.rpcSync(2_000L))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
        assertThat(sleep.withTimeout(Duration.ofSeconds(30)).rpcSync(1L)).isEqualTo(1L);
    }

    @Test
    void boundAsyncCallsJoinTheWaitAllScope() {
        RemoteMethod2<Integer, Integer, Integer> add = caller.to("worker1").method(Ops::add);
        try (RRef<Counter> counter = caller.to("worker2").remote(Counter::new, 0)) {
            RemoteMethod1<Integer, Integer> count = counter.method(Counter::add);
            WaitAllScope scope = WaitAllScope.open();
            try (scope) {
                add.rpcAsync(1, 2);
                count.rpcAsync(3);
            }
            assertThat(scope.futures()).hasSize(2).allMatch(RpcFuture::done);
        }
    }

    /** The encoded size of each application call this worker made, in order. */
    private static final class Sizes implements CallObserver {
        private final ConcurrentLinkedQueue<Long> sizes = new ConcurrentLinkedQueue<>();

        @Override
        public boolean followsCall(CallInfo call, CallHeaders headers) {
            return true;
        }

        @Override
        public void callEnded(CallTimeline call) {
            sizes.add(call.requestBytes());
        }

        List<Long> of(int... indexes) {
            List<Long> all = new ArrayList<>(sizes);
            List<Long> picked = new ArrayList<>();
            for (int index : indexes) {
                picked.add(all.get(index));
            }
            return picked;
        }
    }
}
