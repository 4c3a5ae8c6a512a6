package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What is particular to the in-process backend; {@code contract.InProcessAgentContractTest} covers the common ground. */
@Timeout(60)
class InProcessBackendTest {
    private static final AtomicReference<Object> RECEIVED = new AtomicReference<>();

    @TempDir
    Path dir;

    /** Keeps what it was given, so the test can compare identities. */
    public static List<String> keep(List<String> value) {
        RECEIVED.set(value);
        value.add("added there");
        return value;
    }

    @Test
    void startsThroughRpcAgentsWithAFileRendezvous() throws Exception {
        RpcBackendOptions options = RpcBackendOptions.builder().initMethod("file://" + dir.resolve("group"))
                .rendezvousTimeout(Duration.ofSeconds(20)).applicationPackage(LocalCluster.TEST_CODE).build();
        CompletableFuture<RpcAgent> bob = CompletableFuture.supplyAsync(
                () -> RpcAgents.start("bob", BackendType.IN_PROCESS, 1, 2, options));
        try (RpcAgent alice = RpcAgents.start("alice", BackendType.IN_PROCESS, 0, 2, options)) {
            try (RpcAgent b = bob.get(30, java.util.concurrent.TimeUnit.SECONDS)) {
                assertThat(alice.rpcSync("bob", Ops::whoAmI)).isEqualTo("bob");
                assertThat(b.rpcSync("alice", Ops::concat, "x", "y")).isEqualTo("xy");
                assertThat(alice.getDebugInfo()).containsEntry("agent.transport", "in-process");
                assertThat(alice.getDebugInfo().get("agent.address")).startsWith("local:alice/");
                // the graceful shutdown of one needs the other: close both at once
                CompletableFuture<Void> bobDone = CompletableFuture.runAsync(b::shutdown);
                alice.shutdown();
                bobDone.get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void argumentsAndResultsAreCopiesAsOverTcp() {
        try (LocalCluster cluster = LocalCluster.start(2, BackendType.IN_PROCESS)) {
            List<String> mine = new ArrayList<>(List.of("sent"));
            List<String> back = cluster.agent(0).rpcSync("worker1", InProcessBackendTest::keep, mine);
            assertThat(RECEIVED.get()).isNotSameAs(mine);
            assertThat(back).isNotSameAs(mine).isNotSameAs(RECEIVED.get()).containsExactly("sent", "added there");
            assertThat(mine).containsExactly("sent");
        }
    }

    @Test
    void aWorkerThatGoesAwayFailsCallsToItPromptlyWhileOthersGoOn() {
        try (LocalCluster cluster = LocalCluster.start(3, BackendType.IN_PROCESS,
                b -> b.rpcTimeout(Duration.ofSeconds(60)))) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.rpcSync("worker2", Ops::noop, 1)).isEqualTo(1);
            cluster.agent(2).shutdown(false, Duration.ZERO);
            assertThatThrownBy(() -> w0.rpcAsync("worker2", Ops::noop, 2).await(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE));
            assertThat(w0.rpcSync("worker1", Ops::noop, 3)).isEqualTo(3);
            assertThat(cluster.agent(1).rpcSync("worker0", Ops::noop, 4)).isEqualTo(4);
            cluster.agent(0).shutdown(false, Duration.ZERO);
            cluster.agent(1).shutdown(false, Duration.ZERO);
        }
    }

    @Test
    void oversizedMessagesFailAsOverTcp() {
        try (LocalCluster cluster = LocalCluster.start(2, BackendType.IN_PROCESS, b -> b.maxMessageBytes(64 * 1024))) {
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::identity, (Object) new byte[100_000]))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e).hasMessageContaining("exceeds the maximum message size"));
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 1)).isEqualTo(2);
        }
    }
}
