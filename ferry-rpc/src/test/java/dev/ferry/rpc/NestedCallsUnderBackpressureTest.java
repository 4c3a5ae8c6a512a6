package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Nested calls never deadlock a worker, however many requests are queued on it: each pattern
 * sends 1,000 concurrent requests whose handlers block on nested calls (to themselves, back to
 * the caller, around the group, from every worker into one), with the default queue limit and
 * with a small one. Before the fix, the default limit (1,024 queued requests) paused reading the
 * very connections the nested calls and their answers came on, and every call timed out.
 */
@Timeout(180)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NestedCallsUnderBackpressureTest {
    private static final int CALLS = 1_000;
    /** Far above what the calls take; a deadlock fails them all with TIMEOUT at this bound. */
    private static final Duration RPC_TIMEOUT = Duration.ofSeconds(40);

    private LocalCluster defaultLimit;
    private LocalCluster smallLimit;

    @BeforeAll
    void start() {
        defaultLimit = LocalCluster.start(3, b -> b.rpcTimeout(RPC_TIMEOUT));
        smallLimit = LocalCluster.start(3, b -> b.rpcTimeout(RPC_TIMEOUT).maxQueuedRequests(4).numWorkerThreads(2));
    }

    @AfterAll
    void stop() {
        try {
            // The small limit was reached: reading paused on worker1, and resumed.
            assertThat(Long.parseLong(smallLimit.agent(1).getDebugInfo().get("agent.read_pauses"))).isPositive();
        } finally {
            defaultLimit.close();
            smallLimit.close();
        }
    }

    private LocalCluster cluster(int limit) {
        return limit == 0 ? defaultLimit : smallLimit;
    }

    /** Starts {@code CALLS} calls at once, {@code call.apply(i)} each, and checks every answer is {@code i}. */
    private static void allAnswer(IntFunction<RpcFuture<Integer>> call) {
        List<RpcFuture<Integer>> futures = new ArrayList<>(CALLS);
        for (int i = 0; i < CALLS; i++) {
            futures.add(call.apply(i));
        }
        for (int i = 0; i < CALLS; i++) {
            assertThat(futures.get(i).await(RPC_TIMEOUT.plusSeconds(10))).isEqualTo(i);
        }
    }

    /** 0: the default limit; else the small one. */
    @ParameterizedTest(name = "limit {0}")
    @ValueSource(ints = {0, 4})
    void handlersCallingTheirOwnWorker(int limit) {
        RpcAgent w0 = cluster(limit).agent(0);
        allAnswer(i -> w0.rpcAsync("worker1", Ops::relay, "worker1", i));
    }

    @ParameterizedTest(name = "limit {0}")
    @ValueSource(ints = {0, 4})
    void handlersCallingBackTheirCaller(int limit) {
        RpcAgent w0 = cluster(limit).agent(0);
        allAnswer(i -> w0.rpcAsync("worker1", Ops::relay, "worker0", i));
    }

    @ParameterizedTest(name = "limit {0}")
    @ValueSource(ints = {0, 4})
    void chainsAroundTheGroup(int limit) {
        RpcAgent w0 = cluster(limit).agent(0);
        allAnswer(i -> w0.rpcAsync("worker1", Ops::deepRelay, 5, i));
    }

    @ParameterizedTest(name = "limit {0}")
    @ValueSource(ints = {0, 4})
    void everyWorkerIntoOneWhoseHandlersCallItself(int limit) {
        LocalCluster cluster = cluster(limit);
        allAnswer(i -> cluster.agent(i % 3).rpcAsync("worker1", Ops::relay, "worker1", i));
    }

    @ParameterizedTest(name = "limit {0}")
    @ValueSource(ints = {0, 4})
    void synchronousCallersFromManyThreads(int limit) throws Exception {
        LocalCluster cluster = cluster(limit);
        List<Thread> callers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 50; t++) {
            int first = t * (CALLS / 50);
            callers.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = first; i < first + CALLS / 50; i++) {
                        assertThat(cluster.agent(i % 3).rpcSync("worker1", Ops::relay, "worker1", i)).isEqualTo(i);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread caller : callers) {
            caller.join(RPC_TIMEOUT.plusSeconds(30).toMillis());
        }
        assertThat(failures).isEmpty();
        assertThat(callers).noneMatch(Thread::isAlive);
    }
}
