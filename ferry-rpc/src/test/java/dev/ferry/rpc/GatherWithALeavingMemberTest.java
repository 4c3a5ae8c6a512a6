package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A member that begins shutdown without taking part in a gather the others wait in (its program
 * threw before the gather, say) fails that gather at once, naming it, instead of leaving the others
 * to wait until the gather's timeout while it waits for them in shutdown. A member that took part
 * before it began shutdown is still waited for.
 */
@Timeout(60)
class GatherWithALeavingMemberTest {
    /** The gathers' own timeout: far longer than the bounded waits below, so a failure seen there is not a timeout. */
    private static final Duration GATHER_TIMEOUT = Duration.ofSeconds(45);
    private static final long PROMPTLY_SECONDS = 15;

    private static CompletableFuture<Map<String, Object>> gather(RpcAgent agent, Object value, List<String> names) {
        return CompletableFuture.supplyAsync(() -> names == null ? agent.allGather(value, GATHER_TIMEOUT)
                : agent.allGather(value, names, GATHER_TIMEOUT));
    }

    private static CompletableFuture<Void> shutdown(RpcAgent agent) {
        return CompletableFuture.runAsync(() -> agent.shutdown(true, GATHER_TIMEOUT));
    }

    private static void assertFailsNaming(CompletableFuture<?> gather, String leaving) {
        assertThatThrownBy(() -> gather.get(PROMPTLY_SECONDS, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(RpcException.Code.SHUTDOWN);
                    assertThat(e.getMessage()).contains(leaving).contains("began shutdown");
                });
    }

    /** Worker0 leads the group's gathers: it leaving, or a follower leaving. */
    @ParameterizedTest(name = "worker{0} leaving")
    @ValueSource(ints = {0, 2})
    void aGatherOverTheGroup(int leaver) throws Exception {
        LocalCluster cluster = LocalCluster.start(3);
        List<CompletableFuture<Map<String, Object>>> gathers = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            if (rank != leaver) {
                gathers.add(gather(cluster.agent(rank), rank, null));
            }
        }
        CompletableFuture<Void> leaving = shutdown(cluster.agent(leaver));

        for (CompletableFuture<Map<String, Object>> gather : gathers) {
            assertFailsNaming(gather, "worker" + leaver);
        }
        cluster.close();
        leaving.get(PROMPTLY_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aNamedGatherWhoseLeaderIsNeitherTheGroupsNorTheLeaver() throws Exception {
        // worker1 leads the gather over {worker1, worker3}; graceful shutdown's gathers are led by
        // worker0, which is not in it.
        LocalCluster cluster = LocalCluster.start(4);
        CompletableFuture<Map<String, Object>> one = gather(cluster.agent(1), 1, List.of("worker1", "worker3"));
        CompletableFuture<Void> leaving = shutdown(cluster.agent(3));

        assertFailsNaming(one, "worker3");
        cluster.close();
        leaving.get(PROMPTLY_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aMemberThatTookPartBeforeItLeftIsStillWaitedFor() throws Exception {
        LocalCluster cluster = LocalCluster.start(3);
        List<String> pair = List.of("worker1", "worker2");
        CompletableFuture<Map<String, Object>> two = gather(cluster.agent(2), 2, pair);
        // worker2 has started the gather (its value is on its way to worker1, the leader, which has
        // not gathered yet) when it begins shutdown.
        await().atMost(Duration.ofSeconds(PROMPTLY_SECONDS))
                .until(() -> cluster.agent(2).getDebugInfo().get("agent.gathers_in_progress").startsWith("worker1,worker2#"));
        CompletableFuture<Void> shutdown = shutdown(cluster.agent(2));
        CompletableFuture<Map<String, Object>> one = gather(cluster.agent(1), 1, pair);

        assertThat(one.get(PROMPTLY_SECONDS, TimeUnit.SECONDS)).isEqualTo(Map.of("worker1", 1, "worker2", 2));
        assertThat(two.get(PROMPTLY_SECONDS, TimeUnit.SECONDS)).isEqualTo(one.get());
        cluster.close();
        shutdown.get(PROMPTLY_SECONDS, TimeUnit.SECONDS);
    }
}
