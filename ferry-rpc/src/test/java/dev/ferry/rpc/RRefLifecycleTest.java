package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

@Timeout(180)
class RRefLifecycleTest {

    private static long usedHeapAfterGc() {
        Runtime runtime = Runtime.getRuntime();
        System.gc();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    private static int debug(RpcAgent agent, String key) {
        return Integer.parseInt(agent.getDebugInfo().get("rref." + key));
    }

    @Test
    void gracefulShutdownReleasesHeldReferencesAndLaterUseFailsClearly() {
        LocalCluster cluster = LocalCluster.start(3);
        RRef<Counter> held = cluster.agent(0).to(1).remote(Counter::new, 1);
        RRef<Integer> shared = cluster.agent(2).rref(7);
        cluster.agent(2).rpcSync("worker0", Ops::identity, shared);
        assertThat(held.toHere().value()).isEqualTo(1);
        cluster.close(); // graceful: held references are released first, so nothing leaks
        for (RpcAgent agent : cluster.agents()) {
            assertThat(agent.isRunning()).isFalse();
        }
        assertThatThrownBy(held::toHere).isInstanceOf(RpcException.class)
                .hasMessageContaining("Cannot call to_here() on it after deletion");
    }

    @Test
    void passingOnAnUnusableReferenceFailsWithItsOwnCodeNotAsSerialization() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            RpcAgent w0 = cluster.agent(0);
            RRef<Integer> deleted = w0.remote("worker1", Ops::add, 1, 2);
            assertThat(deleted.toHere()).isEqualTo(3);
            deleted.close();
            // what toHere() on it says, in the same code: a retry or catch keyed on the code sees the truth
            assertThatThrownBy(() -> w0.rpcSync("worker2", Ops::identity, deleted))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_RREF);
                        assertThat(e.getMessage()).contains("Cannot call fork an UserRRef after deletion");
                    });

            RRef<Integer> failed = w0.remote("worker1", Ops::fail, "no value");
            assertThatThrownBy(failed::toHere).isInstanceOf(RpcException.class);
            // the fetch may fail before the creation's own answer is in; once it is, the creator knows
            await().atMost(Duration.ofSeconds(20)).until(failed::confirmedByOwner);
            assertThatThrownBy(() -> w0.rpcAsync("worker2", Ops::identity, failed).await())
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
                        assertThat(e.workerName()).isEqualTo("worker1");
                        assertThat(e.remoteMessage()).isEqualTo("no value");
                    });
            // the agent is unharmed: the same worker takes a usable reference next
            RRef<Integer> fine = w0.remote("worker1", Ops::add, 2, 2);
            assertThat(w0.rpcSync("worker2", Ops::identity, fine)).isInstanceOf(RRef.class);
        }
    }

    @Test
    void toHereRacingCloseOnAnotherThreadEndsAtOnceAndLeavesNothingOnTheOwner() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2);
             java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(3)) {
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            for (int round = 0; round < 200; round++) {
                RRef<Integer> rref = w0.remote("worker1", Ops::add, round, 1);
                assertThat(rref.toHere()).isEqualTo(round + 1);
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                List<java.util.concurrent.Future<Object>> uses = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    uses.add(threads.submit(() -> {
                        go.await();
                        try {
                            // bounded: before the fix a fetch overtaken by its delete waited out the timeout
                            return rref.toHere(Duration.ofSeconds(10));
                        } catch (RpcException e) {
                            return e.code();
                        }
                    }));
                }
                go.countDown();
                rref.close();
                for (java.util.concurrent.Future<Object> use : uses) {
                    assertThat(use.get(30, java.util.concurrent.TimeUnit.SECONDS))
                            .as("round %d: the value or 'deleted', never a wait", round)
                            .isIn(round + 1, RpcException.Code.UNKNOWN_RREF);
                }
            }
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                assertThat(debug(w1, "num_owner_rrefs")).isZero();
                assertThat(debug(w0, "num_live_users")).isZero();
            });
        }
    }

    @Test
    void aCreationTheOwnerRefusesWithAFerryErrorIsFreedThereWhenReleased() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            // the owner registers the creation, then finds the function returns no future: INVALID_ARGUMENT, not REMOTE_ERROR
            RRef<Object> refused = w0.remote("worker1", Ops::asyncWrongType);
            assertThatThrownBy(refused::toHere).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT));
            await().atMost(Duration.ofSeconds(20)).until(refused::confirmedByOwner);
            refused.close();
            // before the fix the creator thought the owner never heard of it and kept the delete
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                assertThat(debug(w1, "num_owner_rrefs")).isZero();
                assertThat(debug(w1, "num_forks")).isZero();
            });
        }
    }

    @Test
    void debugInfoFollowsTheProtocol() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            RRef<Integer> local = w0.rref(1);
            assertThat(debug(w0, "num_owner_rrefs")).isZero(); // not shared yet
            RRef<Integer> remote = w0.remote("worker1", Ops::noop, 3);
            assertThat(remote.toHere()).isEqualTo(3);
            assertThat(debug(w0, "num_pending_users")).isZero();
            assertThat(debug(w1, "num_owner_rrefs")).isEqualTo(1);
            assertThat(debug(w1, "num_forks")).isEqualTo(1);
            // a user shares with another user: the owner learns of the new fork
            w0.rpcSync("worker2", Counter::sumOfRRefs, List.of(remote, local));
            remote.close();
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                System.gc();
                return debug(w1, "num_owner_rrefs") == 0 && debug(w0, "num_owner_rrefs") == 0;
            });
        }
    }

    /**
     * A released reference's delete goes with the next call to its owner (riding on it when that
     * call is ordered anyway, as a remote() is; just ahead of it otherwise), or, with no call
     * coming, travels on its own; deletes made together travel together.
     */
    @Test
    void deletesGoWithTheNextCallOrTravelOnTheirOwn() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            RRef<Integer> first = w0.remote("worker1", Ops::noop, 1);
            assertThat(first.toHere()).isEqualTo(1);
            first.close();
            RRef<Integer> carrier = w0.remote("worker1", Ops::add, 1, 2); // ordered: it carries the delete
            assertThat(carrier.toHere()).isEqualTo(3);
            assertThat(debug(w1, "num_owner_rrefs")).as("the delete went before the new RRef's value").isEqualTo(1);
            carrier.close();
            assertThat(w0.rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3); // unordered: the delete goes ahead of it
            await().atMost(Duration.ofSeconds(20)).until(() -> debug(w1, "num_owner_rrefs") == 0);

            List<RRef<Integer>> many = new java.util.ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                many.add(w0.remote("worker1", Ops::noop, i));
            }
            assertThat(many.get(999).toHere()).isEqualTo(999);
            many.forEach(RRef::close); // no call follows: the deletes go out on a timer tick
            await().atMost(Duration.ofSeconds(20)).until(() -> debug(w1, "num_owner_rrefs") == 0
                    && debug(w0, "num_pending_users") == 0 && debug(w0, "num_pending_futures") == 0);
        }
    }

    /**
     * Three workers create RRefs on each other, fork them around and drop them in random order;
     * at the end no owner holds a value, and memory is flat.
     */
    @Test
    void stressCreateForkAndDropInRandomOrder() {
        int total = Integer.getInteger("ferry.stress.rrefs", 100_000);
        try (LocalCluster cluster = LocalCluster.start(3)) {
            long heapBefore = usedHeapAfterGc();
            List<RpcFuture<Integer>> rounds = cluster.onEach(agent -> {
                Random random = new Random(agent.getWorkerInfo().id());
                List<RRef<Integer>> live = new ArrayList<>();
                List<RpcFuture<Integer>> pending = new ArrayList<>();
                int created = 0;
                while (created < total / 3) {
                    int owner = random.nextInt(3);
                    live.add(agent.to(owner).remote(Ops::noop, created++));
                    if (random.nextInt(4) == 0) {
                        // fork: hand one of ours to a random worker, which reads it
                        RRef<Integer> some = live.get(random.nextInt(live.size()));
                        pending.add(agent.to(random.nextInt(3)).rpcAsync(Counter::addToRRef, some, 0));
                    }
                    if (live.size() > 64) {
                        live.remove(random.nextInt(live.size())).close();
                    }
                    if (pending.size() > 64) {
                        RpcFuture.waitAll(pending);
                        pending.clear();
                    }
                }
                RpcFuture.waitAll(pending);
                java.util.Collections.shuffle(live, random);
                live.forEach(RRef::close);
                return RpcFuture.completed(created);
            });
            assertThat(rounds.stream().mapToInt(RpcFuture::await).sum()).isGreaterThanOrEqualTo(total - 3);
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                System.gc();
                return cluster.agents().stream().allMatch(a -> debug(a, "num_owner_rrefs") == 0
                        && debug(a, "num_pending_users") == 0 && debug(a, "num_pending_children") == 0);
            });
            // flat memory: what 100,000 RRefs left behind is far below what they would weigh if kept
            assertThat(usedHeapAfterGc() - heapBefore).isLessThan(64L << 20);
        }
    }
}
