package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferry.rpc.testing.LocalCluster;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Deadlines travel with calls and {@code cancel()} cancels the remote work, over a chain of three
 * workers on loopback sockets: worker0 calls worker1, whose handler calls worker2
 * ({@link CancelFunctions} records what each hop saw).
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeadlinesAndCancellationTest {
    /** Far longer than any scenario's wait: reaching it would mean the deadline was not inherited. */
    private static final long OWN_TIMEOUT_MILLIS = 30_000;
    private static final Duration BOUND = Duration.ofSeconds(10);

    private LocalCluster cluster;
    private CancelFunctions.Probe probe;

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3, b -> b.numWorkerThreads(4));
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @BeforeEach
    void newProbe() {
        probe = new CancelFunctions.Probe();
        CancelFunctions.probe = probe;
    }

    @AfterEach
    void releaseWhatIsLeft() {
        probe.release.complete(null); // a scenario that failed leaves no handler waiting for the next
    }

    @Test
    void aNestedCallEndsByItsCallersDeadlineAndItsCalleeIsInterrupted() throws Exception {
        long start = System.nanoTime();
        RpcFuture<Boolean> call = cluster.agent(0).to("worker1").withTimeout(Duration.ofSeconds(1))
                .rpcAsync(CancelFunctions::relayAndWait, "worker2", OWN_TIMEOUT_MILLIS);

        assertThatThrownBy(call::await).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
        assertThat(probe.nestedEnded.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // worker1's nested call ends with the caller's deadline: by its own expiry of the inherited
        // deadline, or by worker0's cancel, which the same instant sends (whichever comes first).
        RpcException nested = (RpcException) probe.nestedFailure.get();
        assertThat(nested.code()).as(nested.toString()).isIn(RpcException.Code.TIMEOUT, RpcException.Code.CANCELLED);
        if (nested.code() == RpcException.Code.TIMEOUT) {
            assertThat(nested.getMessage()).contains("inherited", "worker0");
        }
        // The expired call is cancelled on worker2 too: its handler is interrupted long before its own timeout.
        assertThat(probe.interrupted.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(OWN_TIMEOUT_MILLIS / 2));
        assertTablesDrain();
    }

    @Test
    void aCallMadeInAnAsyncHandlersContinuationInheritsItsDeadline() throws Exception {
        long start = System.nanoTime();
        RpcFuture<String> answer = cluster.agent(0).to("worker1").withTimeout(Duration.ofSeconds(1))
                .rpcSync(CancelFunctions::answerThenCallOn, "worker2", OWN_TIMEOUT_MILLIS);
        assertThat(answer.await()).isEqualTo("answered");

        // worker0 has its answer, so nothing cancels the nested call: it expires by the deadline it inherited.
        assertThat(probe.nestedEnded.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        RpcException nested = (RpcException) probe.nestedFailure.get();
        assertThat(nested.code()).as(nested.toString()).isEqualTo(RpcException.Code.TIMEOUT);
        assertThat(nested.getMessage()).contains("inherited", "worker0", "worker2");
        assertThat(probe.interrupted.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(OWN_TIMEOUT_MILLIS / 2));
        assertTablesDrain();
    }

    @Test
    void cancelInterruptsTheHandlerTwoHopsAwayAndCancelsTheNestedCall() throws Exception {
        RpcFuture<Boolean> call = cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(OWN_TIMEOUT_MILLIS))
                .rpcAsync(CancelFunctions::relayAndWait, "worker2", OWN_TIMEOUT_MILLIS);
        assertThat(probe.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("worker2's handler started").isTrue();

        assertThat(call.cancel(true)).isTrue();
        assertThat(call.done()).as("the caller's future ends at once").isTrue();
        assertThatThrownBy(call::await).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.CANCELLED));

        assertThat(probe.interrupted.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("worker2's handler interrupted")
                .isTrue();
        assertThat(probe.nestedEnded.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        RpcFuture<?> nested = probe.nested.get();
        assertThat(nested.failed()).isTrue();
        assertThat(((RpcException) nested.exceptionNow()).code()).as("worker1's nested future")
                .isEqualTo(RpcException.Code.CANCELLED);
        assertThat(call.cancel(true)).as("a second cancel").isFalse();
        assertTablesDrain();
    }

    @Test
    void cancelReachesANestedSynchronousCallOnALane() throws Exception {
        long until = System.nanoTime() + BOUND.toNanos();
        while (!cluster.agent(1).rpcSync("worker2", CancelFunctions::threadName).startsWith("ferry-lane-")) {
            assertThat(System.nanoTime() - until).as("a lane from worker1 to worker2 opened").isNegative();
        }
        // The handler's rpcSync takes a lane when one is idle at that moment; a few tries make sure
        // one scenario ran on a lane (each try is a whole scenario, cancelled and drained).
        boolean onALane = false;
        for (int attempt = 0; attempt < 5 && !onALane; attempt++) {
            newProbe();
            long exchanges = Long.parseLong(cluster.agent(1).getDebugInfo().get("transport.lanes.exchanges"));
            RpcFuture<Boolean> call = cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(OWN_TIMEOUT_MILLIS))
                    .rpcAsync(CancelFunctions::relaySync, "worker2", OWN_TIMEOUT_MILLIS);
            assertThat(probe.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
            onALane = Long.parseLong(cluster.agent(1).getDebugInfo().get("transport.lanes.exchanges")) > exchanges;

            assertThat(call.cancel(true)).isTrue();
            assertThat(probe.interrupted.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(probe.nestedEnded.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(((RpcException) probe.nestedFailure.get()).code()).isEqualTo(RpcException.Code.CANCELLED);
            assertTablesDrain();
        }
        assertThat(onALane).as("a nested call took a lane in one of the tries").isTrue();
        assertThat(cluster.agent(1).rpcSync("worker2", Ops::noop, 7)).as("the lanes go on").isEqualTo(7);
    }

    @Test
    void cancellingTheCompletableFutureViewCancelsTheRemoteWork() throws Exception {
        RpcFuture<Boolean> call = cluster.agent(0).to("worker2").withTimeout(Duration.ofMillis(OWN_TIMEOUT_MILLIS))
                .rpcAsync(CancelFunctions::awaitInterrupt);
        CompletableFuture<Boolean> view = call.toCompletableFuture();
        assertThat(probe.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();

        assertThat(view.cancel(false)).isTrue();
        assertThatThrownBy(view::join).isInstanceOf(CancellationException.class);
        assertThat(call.failed()).isTrue();
        assertThat(((RpcException) call.exceptionNow()).code()).isEqualTo(RpcException.Code.CANCELLED);
        assertThat(probe.interrupted.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertTablesDrain();
    }

    @Test
    void cancelAfterTheAnswerIsANoOp() {
        RpcFuture<Integer> call = cluster.agent(0).rpcAsync("worker1", Ops::add, 2, 3);
        assertThat(call.await()).isEqualTo(5);

        assertThat(call.cancel(true)).isFalse();
        assertThat(call.toCompletableFuture().cancel(true)).isFalse();
        assertThat(call.value()).isEqualTo(5);
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 1)).as("the connection goes on").isEqualTo(2);
    }

    @Test
    void aHandlerThatIgnoresInterruptsHasItsAnswerDroppedAndNothingLeaks() throws Exception {
        RpcFuture<String> call = cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(OWN_TIMEOUT_MILLIS))
                .rpcAsync(CancelFunctions::ignoreInterrupts);
        assertThat(probe.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();

        assertThat(call.cancel(true)).isTrue();
        assertThatThrownBy(call::await).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.CANCELLED));
        await().atMost(BOUND).until(() -> probe.ignored.get() > 0);
        assertThat(cluster.agent(1).getDebugInfo().get("agent.server_active_calls")).as("still running").isEqualTo("1");

        probe.release.complete(null); // it answers now; worker0 drops the answer
        assertTablesDrain();
        assertThat(call.exceptionNow()).isInstanceOf(RpcException.class);
        assertThat(cluster.agent(1).rpcSync("worker0", Ops::add, 1, 2)).isEqualTo(3);
    }

    @Test
    void aCancelledRequestThatHasNotStartedNeverRuns() throws Exception {
        // worker1 has four request threads: four handlers that hold them keep a fifth request waiting.
        java.util.List<RpcFuture<String>> holders = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            holders.add(cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(OWN_TIMEOUT_MILLIS))
                    .rpcAsync(CancelFunctions::ignoreInterrupts));
        }
        await().atMost(BOUND).until(() -> "4".equals(cluster.agent(1).getDebugInfo().get("agent.server_running_calls")));
        // Its argument, an RRef worker0 uses and worker2 owns, must still be accepted by worker1.
        RRef<Integer> travelling = cluster.agent(0).remote("worker2", Ops::noop, 3);
        assertThat(travelling.toHere()).isEqualTo(3);
        RpcFuture<Integer> waiting = cluster.agent(0).rpcAsync("worker1", CancelFunctions::count, travelling);
        await().atMost(BOUND).until(() -> "5".equals(cluster.agent(1).getDebugInfo().get("agent.server_active_calls")));

        long cancelledBefore = Long.parseLong(cluster.agent(1).getDebugInfo().get("agent.server_cancelled_calls"));
        assertThat(waiting.cancel(true)).isTrue();
        await().atMost(BOUND).until(() -> Long.parseLong(cluster.agent(1).getDebugInfo()
                .get("agent.server_cancelled_calls")) == cancelledBefore + 1);
        probe.release.complete(null);
        assertThat(RpcFuture.waitAll(holders)).containsOnly("released");
        assertTablesDrain();
        assertThat(probe.ran.get()).as("the cancelled request ran").isZero();
        await().atMost(BOUND).untilAsserted(() -> assertThat(cluster.agent(0).getDebugInfo())
                .as("the fork worker0 sent was accepted").containsEntry("rref.num_pending_children", "0"));
        travelling.close();
    }

    @Test
    void aCancelledHandlersRemoteCreationLeavesNoRRefOnTheOwner() throws Exception {
        // What other scenarios left (an RRef argument of a request that never ran is released when
        // the collector finds it, as a handler's arguments are) is not this scenario's.
        int ownedBefore = rrefCount(2, "num_owner_rrefs");
        int usersBefore = rrefCount(1, "num_live_users");
        RpcFuture<Boolean> call = cluster.agent(0).to("worker1").withTimeout(Duration.ofMillis(OWN_TIMEOUT_MILLIS))
                .rpcAsync(CancelFunctions::remoteAndWait, "worker2");
        assertThat(probe.started.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("the owner makes the value").isTrue();

        assertThat(call.cancel(true)).isTrue();
        assertThat(probe.interrupted.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("the owner's function").isTrue();
        assertThat(probe.nestedEnded.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(((RpcException) probe.nestedFailure.get()).code()).isEqualTo(RpcException.Code.CANCELLED);
        // The creator's reference is closed, its delete reaches the owner: the owner's table drains.
        await().atMost(BOUND).untilAsserted(() -> {
            assertThat(rrefCount(2, "num_owner_rrefs")).as("worker2's RRefs").isLessThanOrEqualTo(ownedBefore);
            assertThat(rrefCount(1, "num_live_users")).as("worker1's users").isLessThanOrEqualTo(usersBefore);
            assertThat(rrefCount(1, "num_pending_users")).isZero();
        });
        assertTablesDrain();
    }

    private int rrefCount(int rank, String name) {
        return Integer.parseInt(cluster.agent(rank).getDebugInfo().get("rref." + name));
    }

    /** Every worker's tables of calls sent and received drain. */
    private void assertTablesDrain() {
        await().atMost(BOUND).untilAsserted(() -> {
            for (RpcAgent agent : cluster.agents()) {
                assertThat(agent.getDebugInfo()).as(agent.getWorkerInfo().name())
                        .containsEntry("agent.client_active_user_calls", "0")
                        .containsEntry("agent.server_active_calls", "0")
                        .containsEntry("agent.server_cancellable_calls", "0");
            }
        });
    }
}
