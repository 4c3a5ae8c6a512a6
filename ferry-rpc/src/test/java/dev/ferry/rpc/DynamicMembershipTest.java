package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferry.rpc.testing.DynamicWorld;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Worlds whose members change while they run: workers join without a world size, leave
 * gracefully (rank 0 too), and come back after a crash as a new incarnation; the others see it in
 * their listeners and {@code getWorkerInfos()}, and calls and RRefs behave. The rendezvous store
 * lives in the test, as an external one (etcd, ZooKeeper) would: no worker holds it.
 */
@Timeout(120)
class DynamicMembershipTest {
    private static final Duration STEP = Duration.ofSeconds(30);
    private DynamicWorld world;

    @BeforeEach
    void startStore() {
        world = DynamicWorld.start();
    }

    @AfterEach
    void stopAll() {
        world.close();
    }

    private RpcAgent start(int rank, int worldSize) {
        return world.join(rank, worldSize);
    }

    private static List<String> names(RpcAgent agent) {
        return agent.getWorkerInfos().stream().map(WorkerInfo::name).toList();
    }

    /** What one worker's membership listener heard, one line per event. */
    private static List<String> listen(RpcAgent agent) {
        List<String> heard = new CopyOnWriteArrayList<>();
        agent.addMembershipListener(new MembershipListener() {
            @Override
            public void onJoined(WorkerInfo worker) {
                heard.add("joined " + worker.name());
            }

            @Override
            public void onLeft(WorkerInfo worker) {
                heard.add("left " + worker.name());
            }

            @Override
            public void onLost(WorkerInfo worker, String reason) {
                heard.add("lost " + worker.name() + ": " + reason);
            }
        });
        return heard;
    }

    @Test
    void workersJoinARunningWorldOneAtATimeOrTogetherAndEveryoneSeesThem() throws Exception {
        RpcAgent zero = start(0, 0);
        List<String> heard = listen(zero);
        assertThat(names(zero)).containsExactly("worker0");
        RpcAgent one = start(1, 0);
        assertThat(names(one)).containsExactly("worker0", "worker1");
        await().atMost(STEP).until(() -> heard.contains("joined worker1"));

        // Two at once: whichever registered second greets the first.
        CompletableFuture<RpcAgent> two = CompletableFuture.supplyAsync(() -> start(2, 0));
        CompletableFuture<RpcAgent> three = CompletableFuture.supplyAsync(() -> start(3, 0));
        List<RpcAgent> all = List.of(zero, one, two.get(60, TimeUnit.SECONDS), three.get(60, TimeUnit.SECONDS));
        for (RpcAgent agent : all) {
            await().atMost(STEP).untilAsserted(() ->
                    assertThat(names(agent)).containsExactly("worker0", "worker1", "worker2", "worker3"));
        }
        for (RpcAgent from : all) {
            for (RpcAgent to : all) {
                assertThat(from.rpcSync(to.getWorkerInfo().name(), Ops::add, 1, to.getWorkerInfo().id()))
                        .isEqualTo(1 + to.getWorkerInfo().id());
            }
        }
        assertThat(heard).contains("joined worker2", "joined worker3").noneMatch(line -> line.startsWith("lost"));
        // Whole-group gathers count from the group's start, which joiners did not see: refused,
        // saying what works instead; gathers over named workers do.
        assertThatThrownBy(() -> one.allGather(1)).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE);
            assertThat(e.getMessage()).contains("name the workers");
        });
        List<CompletableFuture<java.util.Map<String, Object>>> gathers = new ArrayList<>();
        for (RpcAgent agent : all) {
            gathers.add(CompletableFuture.supplyAsync(() -> agent.allGather(agent.getWorkerInfo().id(),
                    List.of("worker0", "worker1", "worker2", "worker3"), STEP)));
        }
        for (CompletableFuture<java.util.Map<String, Object>> gather : gathers) {
            assertThat(gather.get(60, TimeUnit.SECONDS)).containsEntry("worker0", 0).containsEntry("worker3", 3);
        }
    }

    @Test
    void anyWorkerLeavesGracefullyRankZeroIncludedAndCallsToItFailAtOnce() throws Exception {
        RpcAgent zero = start(0, 0);
        RpcAgent one = start(1, 0);
        RpcAgent two = start(2, 0);
        List<String> heard = listen(one);
        RRef<Counter> counter = one.remote("worker0", Counter::new, 5);
        assertThat(counter.toHere()).isNotNull();
        // A call in flight to the leaver when it leaves is answered: it finishes what it has.
        RpcFuture<Long> inFlight = one.rpcAsync("worker0", Ops::sleepMillis, 300L);

        zero.shutdown(); // leaves; the others run on
        assertThat(inFlight.await()).isEqualTo(300L);
        assertThat(zero.isRunning()).isFalse();
        await().atMost(STEP).until(() -> heard.contains("left worker0"));
        assertThat(names(one)).containsExactly("worker1", "worker2");
        assertThat(names(two)).containsExactly("worker1", "worker2");

        long start = System.nanoTime();
        assertThatThrownBy(() -> one.rpcSync("worker0", Ops::add, 1, 2)).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
            assertThat(e.getMessage()).contains("worker0 left the group");
        });
        assertThatThrownBy(counter::toHere).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
            assertThat(e.getMessage()).contains("its owner is gone", "worker0 left the group");
        });
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("at once, not by timeout").isLessThan(5_000);
        assertThat(one.rpcSync("worker2", Ops::add, 1, 2)).isEqualTo(3);
        // By id too (how distributed autograd addresses a peer): the same answer as by name.
        assertThatThrownBy(() -> one.getWorkerInfo(0)).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
            assertThat(e.getMessage()).contains("worker0 left the group");
        });

        // Rank 0 is free again, and no worker held the store: a newcomer joins the rest.
        RpcAgent newcomer = start(0, 0);
        assertThat(names(newcomer)).containsExactly("worker0", "worker1", "worker2");
        assertThat(newcomer.rpcSync("worker2", Ops::whoAmI)).isEqualTo("worker2");
        await().atMost(STEP).until(() -> heard.contains("joined worker0"));
        assertThat(one.rpcSync("worker0", Ops::whoAmI)).isEqualTo("worker0");
        assertThat(one.getWorkerInfo(0)).isEqualTo(newcomer.getWorkerInfo());
        for (RpcAgent agent : List.of(one, two, newcomer)) {
            agent.shutdown();
        }
    }

    @Test
    void aCrashedWorkerOfAFixedSizeWorldComesBackAsANewIncarnationAndTheWorldShutsDownTogether() throws Exception {
        List<CompletableFuture<RpcAgent>> starting = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            int r = rank;
            starting.add(CompletableFuture.supplyAsync(() -> start(r, 3)));
        }
        RpcAgent zero = starting.get(0).get(60, TimeUnit.SECONDS);
        RpcAgent one = starting.get(1).get(60, TimeUnit.SECONDS);
        RpcAgent two = starting.get(2).get(60, TimeUnit.SECONDS);
        List<String> heard = listen(zero);
        String firstIncarnation = zero.rpcSync("worker2", Ops::incarnation);
        RRef<Counter> oldCounter = zero.remote("worker2", Counter::new, 1);
        assertThat(oldCounter.toHere()).isNotNull();

        two.shutdown(false, Duration.ZERO); // it crashes; its name and rank stay the world's
        RpcAgent again = start(2, 3);        // and is started again, as a launcher would
        assertThat(names(again)).containsExactly("worker0", "worker1", "worker2");
        assertThat(again.getDebugInfo().get("agent.incarnation")).isNotEqualTo(firstIncarnation);

        assertThat(zero.rpcSync("worker2", Ops::incarnation)).isEqualTo(again.getDebugInfo().get("agent.incarnation"));
        assertThat(one.rpcSync("worker2", Ops::add, 2, 2)).isEqualTo(4);
        assertThat(again.rpcSync("worker0", Ops::add, 3, 3)).isEqualTo(6);
        await().atMost(STEP).until(() -> heard.contains("joined worker2"));
        assertThat(heard).anyMatch(line -> line.startsWith("lost worker2"));
        // The old incarnation's RRef is gone with it, although the new one has the same name and id.
        assertThatThrownBy(oldCounter::toHere).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE));

        // Graceful shutdown of the whole world, the new incarnation included.
        List<CompletableFuture<Void>> shutdowns = new ArrayList<>();
        for (RpcAgent agent : List.of(zero, one, again)) {
            shutdowns.add(CompletableFuture.runAsync(() -> agent.shutdown(true, STEP)));
        }
        for (CompletableFuture<Void> shutdown : shutdowns) {
            shutdown.get(60, TimeUnit.SECONDS);
        }
        assertThat(zero.getDebugInfo().get("agent.shutdown.missing")).isEmpty();
    }

    @Test
    void aWorkerThatComesBackToAFixedSizeWorldThatEndedIsToldSo() throws Exception {
        List<CompletableFuture<RpcAgent>> starting = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            int r = rank;
            starting.add(CompletableFuture.supplyAsync(() -> start(r, 2)));
        }
        List<CompletableFuture<Void>> shutdowns = new ArrayList<>();
        for (CompletableFuture<RpcAgent> agent : starting) {
            RpcAgent started = agent.get(60, TimeUnit.SECONDS);
            shutdowns.add(CompletableFuture.runAsync(() -> started.shutdown(true, STEP)));
        }
        for (CompletableFuture<Void> shutdown : shutdowns) {
            shutdown.get(60, TimeUnit.SECONDS);
        }
        assertThatThrownBy(() -> start(1, 2)).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.RENDEZVOUS_FAILED);
            assertThat(e.getMessage()).contains("has ended", "worker0");
        });
    }

    @Test
    void aFixedSizeWorldRefusesNewcomersAndAWorldWithoutOneRefusesAFixedSize() throws Exception {
        RpcAgent zero = start(0, 0);
        assertThatThrownBy(() -> start(1, 2)).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.RENDEZVOUS_FAILED);
            assertThat(e.getMessage()).contains("without a fixed size");
        });
        assertThat(names(zero)).containsExactly("worker0");
    }
}
