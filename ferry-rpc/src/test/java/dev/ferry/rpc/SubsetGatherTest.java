package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** PyTorch's {@code _all_gather(obj, worker_names)} and {@code _barrier(worker_names)}: gathers over some workers. */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SubsetGatherTest {
    private LocalCluster cluster;

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(4);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private static CompletableFuture<Map<String, Object>> gather(RpcAgent agent, Object value, List<String> names) {
        return CompletableFuture.supplyAsync(() -> agent.allGather(value, names, Duration.ofSeconds(20)));
    }

    @Test
    void aBarrierOfTwoWorkersCompletesWithoutTheThird() {
        List<String> pair = List.of("worker2", "worker0");   // any order; worker1 and worker3 take no part
        CompletableFuture<Void> zero = CompletableFuture.runAsync(() -> cluster.agent(0).barrier(pair));
        CompletableFuture<Void> two = CompletableFuture.runAsync(() -> cluster.agent(2).barrier(pair));

        CompletableFuture.allOf(zero, two).join();
    }

    @Test
    void aGatherOverSomeWorkersHoldsTheirValuesOnly() {
        List<String> names = List.of("worker1", "worker2");
        CompletableFuture<Map<String, Object>> one = gather(cluster.agent(1), "b", names);
        CompletableFuture<Map<String, Object>> two = gather(cluster.agent(2), "c", names);

        assertThat(one.join()).isEqualTo(Map.of("worker1", "b", "worker2", "c")).isEqualTo(two.join());
    }

    @Test
    void gathersOverDifferentSetsDoNotWaitForEachOther() {
        // worker1 is in both sets, from two threads at once; each set lines up on its own.
        CompletableFuture<Map<String, Object>> low1 = gather(cluster.agent(1), 10, List.of("worker0", "worker1"));
        CompletableFuture<Map<String, Object>> high1 = gather(cluster.agent(1), 11, List.of("worker1", "worker2"));
        CompletableFuture<Map<String, Object>> high2 = gather(cluster.agent(2), 22, List.of("worker1", "worker2"));

        assertThat(high2.join()).isEqualTo(Map.of("worker1", 11, "worker2", 22));
        assertThat(high1.join()).isEqualTo(high2.join());
        assertThat(low1).isNotDone();

        assertThat(gather(cluster.agent(0), 0, List.of("worker0", "worker1")).join()).isEqualTo(low1.join())
                .isEqualTo(Map.of("worker0", 0, "worker1", 10));
    }

    @Test
    void concurrentGathersOverOneSetEachGetOneValueFromEveryMember() {
        // PyTorch's AllGatherStates: one state per sequence id, numbered per set in call order. Four
        // threads per member gather at once; however they interleave, each gather is answered one
        // value per member (the asking thread's own among them), the same map on every member.
        List<String> set = List.of("worker1", "worker2", "worker3");
        int threads = 4;
        List<CompletableFuture<Map<String, Object>>> gathers = new ArrayList<>();
        List<String> asked = new ArrayList<>();
        try (ExecutorService pool = Executors.newFixedThreadPool(3 * threads)) {
            for (int rank = 1; rank <= 3; rank++) {
                RpcAgent agent = cluster.agent(rank);
                for (int t = 0; t < threads; t++) {
                    String value = "worker" + rank + "-" + t;
                    asked.add(value);
                    gathers.add(CompletableFuture.supplyAsync(() -> agent.allGather(value, set, Duration.ofSeconds(20)), pool));
                }
            }
            CompletableFuture.allOf(gathers.toArray(CompletableFuture[]::new)).join();
        }

        Map<Map<String, Object>, Integer> answers = new HashMap<>();
        for (int i = 0; i < gathers.size(); i++) {
            Map<String, Object> answer = gathers.get(i).join();
            String own = asked.get(i);
            assertThat(answer).containsOnlyKeys(set).containsEntry(own.substring(0, own.indexOf('-')), own);
            answers.merge(answer, 1, Integer::sum);
        }
        assertThat(answers).hasSize(threads).allSatisfy((answer, members) -> assertThat(members).isEqualTo(3));
        assertThat(answers.keySet().stream().flatMap(answer -> answer.values().stream()).toList())
                .containsExactlyInAnyOrderElementsOf(asked);
    }

    @Test
    void theWholeGroupNamedIsTheSameAsNoNames() {
        List<Map<String, Object>> results = cluster.onEach(agent -> agent.allGather(agent.getWorkerInfo().id(),
                agent.getWorkerInfos().stream().map(WorkerInfo::name).toList(), Duration.ofSeconds(20)));

        assertThat(results).containsOnly(Map.of("worker0", 0, "worker1", 1, "worker2", 2, "worker3", 3));
    }

    @Test
    void badSetsFailAtOnceSayingWhy() {
        RpcAgent zero = cluster.agent(0);
        assertThatThrownBy(() -> zero.barrier(List.of("worker1", "worker2")))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("worker0 cannot take part in a gather or barrier of [worker1, worker2]");
        assertThatThrownBy(() -> zero.barrier(List.of("worker0", "nobody")))
                .isInstanceOf(RpcException.class).hasMessageContaining("could not find destination name nobody");
        assertThatThrownBy(() -> zero.barrier(List.of()))
                .isInstanceOf(RpcException.class).hasMessageContaining("needs at least one worker");
    }

    @Test
    void aWorkerThatNeverComesTimesTheOthersOut() {
        // A set no other test uses: after a timeout its gathers no longer line up (as in PyTorch).
        assertThatThrownBy(() -> cluster.agent(0).allGather(1, List.of("worker0", "worker3"), Duration.ofMillis(300)))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT))
                .hasMessageContaining("timed out in allGather");
    }
}
