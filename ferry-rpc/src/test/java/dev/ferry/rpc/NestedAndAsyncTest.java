package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Nested calls never deadlock a worker, whatever numWorkerThreads is: this cluster runs with ONE
 * worker thread, where PyTorch deadlocks (WORKLOADS.md W7b). The agent contract
 * ({@code contract.AbstractAgentContractTest}) runs nested calls over every route.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NestedAndAsyncTest {
    private LocalCluster cluster;

    BackendType backend() {
        return BackendType.NETTY;
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3, backend(), b -> b.numWorkerThreads(1).rpcTimeout(Duration.ofSeconds(20)));
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @Test
    void manyConcurrentBlockingRelaysComplete() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            futures.add(cluster.agent(0).rpcAsync("worker1", Ops::relay, "worker2", i));
        }
        List<Integer> results = RpcFuture.waitAll(futures);
        for (int i = 0; i < 32; i++) {
            assertThat(results.get(i)).isEqualTo(i);
        }
        assertThat(cluster.agent(0).to(1).withTimeout(Duration.ofSeconds(3)).rpcSync(Ops::noop, 7)).isEqualTo(7);
    }

    @Test
    void relayToItselfWithOneThread() {
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::relay, "worker1", 5)).isEqualTo(5);
    }

    @Test
    void deepNestingAroundTheGroup() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            futures.add(cluster.agent(i % 3).to(1).rpcAsync(Ops::deepRelay, 12, i));
        }
        assertThat(RpcFuture.waitAll(futures)).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
    }

    @Test
    void asyncExecutionRepliesWhenTheFutureCompletes() {
        // the function's static type is a future; the caller gets its value as a completed future
        RpcFuture<Integer> relayed = cluster.agent(0).rpcSync("worker1", Ops::asyncRelay, "worker2", 11);
        assertThat(relayed.done()).isTrue();
        assertThat(relayed.await()).isEqualTo(11);
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::asyncChained, "worker2", 1).await()).isEqualTo(4);
        assertThat(cluster.agent(0).rpcSync("worker2", Ops::asyncStage, "done").toCompletableFuture().join())
                .isEqualTo("done!");
        List<RpcFuture<Integer>> many = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            many.add(cluster.agent(0).rpcAsync("worker1", Ops::asyncRelay, "worker2", i).thenCompose(f -> f));
        }
        assertThat(RpcFuture.waitAll(many)).hasSize(32);
    }

    @Test
    void asyncExecutionErrors() {
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::asyncWrongType))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("must return an RpcFuture or CompletionStage");
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::asyncRaise))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.remoteClassName()).isEqualTo(IllegalStateException.class.getName());
                    assertThat(e.remoteMessage()).isEqualTo("Expected error");
                });
        assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::asyncFailLater, "worker2"))
                .isInstanceOf(RpcException.class).hasMessageContaining("failed later");
    }

    @Test
    void waitAllScopeCollectsAsyncCalls() {
        List<RpcFuture<?>> recorded;
        try (WaitAllScope scope = WaitAllScope.open()) {
            for (int i = 0; i < 5; i++) {
                cluster.agent(0).rpcAsync("worker1", Ops::add, i, 1);
            }
            cluster.agent(0).rpcSync("worker1", Ops::add, 0, 0);
            recorded = scope.futures();
        }
        assertThat(recorded).hasSize(6).allMatch(RpcFuture::done);
    }
}
