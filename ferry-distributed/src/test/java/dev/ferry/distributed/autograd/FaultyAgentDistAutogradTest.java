package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.GradientCalls;
import dev.ferry.rpc.FaultInjection;
import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.MessageKinds;
import dev.ferry.rpc.testing.DynamicWorld;
import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * PyTorch's {@code FaultyAgentDistAutogradTest} on {@link FaultInjection}: every worker of a group
 * over loopback TCP shares the faults, as PyTorch's faulty agent's do. PyTorch's
 * {@code CLEANUP_AUTOGRAD_CONTEXT_REQ} is {@link MessageType#AUTOGRAD_CLEANUP}. Beyond PyTorch's two
 * scenarios: a backward pass whose calls and answers are all delayed, a delayed release, messages
 * of a context that come after it ended (directly, or through a nested call, after more releases
 * than a worker remembers), and releases that fail on many tries or on every one (they are sent
 * again until their worker is no longer a member).
 */
@Timeout(120)
class FaultyAgentDistAutogradTest {
    private static final Duration CLEANED = Duration.ofSeconds(10);
    /** PyTorch's suite's faults: the first 3 sends of each of the RRef protocol's messages and of the releases fail. */
    private static final FaultInjection FAULTS = FaultInjection.builder()
            .failSends(3, MessageType.RREF_FORK_REQUEST, MessageType.RREF_CHILD_ACCEPT, MessageType.RREF_USER_DELETE,
                    MessageType.AUTOGRAD_CLEANUP)
            .build();

    private static LocalCluster faulty(int workers, FaultInjection faults) {
        return LocalCluster.start(workers, b -> b.faultInjection(faults).failOnRRefLeaks(true));
    }

    private static int contexts(RpcAgent agent) {
        return Integer.parseInt(DistAutograd.debugInfo(agent).get("num_autograd_contexts"));
    }

    private static long failedSends(RpcAgent agent) {
        return Long.parseLong(agent.getDebugInfo().get("transport.faults.failed_sends"));
    }

    // dist_autograd_test: FaultyAgentDistAutogradTest.test_verify_backend_options
    @Test
    void theOptionsCarryTheFaults() {
        RpcBackendOptions options = RpcBackendOptions.builder().numWorkerThreads(8).rpcTimeout(Duration.ofSeconds(60))
                .faultInjection(FAULTS).build();
        assertThat(options.numWorkerThreads()).isEqualTo(8);
        assertThat(options.rpcTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(options.faultInjection().messagesToFail()).hasSize(4);
        assertThat(options.faultInjection().failedSends(MessageType.AUTOGRAD_CLEANUP)).isEqualTo(3);
        assertThat(options.faultInjection().messagesToDelay()).isEmpty();
        // a library may claim this kind for its calls, not Ferry's own
        assertThat(MessageKinds.of(MessageKinds.mark(CallHeaders.empty(), MessageType.AUTOGRAD_CLEANUP)))
                .isEqualTo(MessageType.AUTOGRAD_CLEANUP);
        assertThat(MessageKinds.of(CallHeaders.empty())).isEqualTo(MessageType.CALL);
        assertThatThrownBy(() -> MessageKinds.mark(CallHeaders.empty(), MessageType.RREF_USER_DELETE))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // dist_autograd_test: FaultyAgentDistAutogradTest.test_context_cleanup_tensor_with_grad
    @Test
    void contextsAreReleasedEverywhereThoughTheFirstReleasesFail() {
        try (LocalCluster cluster = faulty(4, FAULTS)) {
            // each worker, in a context of its own, calls every other one with tensors requiring grad
            List<CompletableFuture<Long>> steps = new ArrayList<>();
            for (RpcAgent agent : cluster.agents()) {
                steps.add(CompletableFuture.supplyAsync(() -> {
                    try (DistAutogradContext context = DistAutograd.context(agent)) {
                        for (RpcAgent other : cluster.agents()) {
                            if (other != agent) {
                                Tensor sum = agent.rpcSync(other.getWorkerInfo().name(), AutogradFunctions::add,
                                        Tensors.ones(3, 3).requiresGrad_(true), Tensors.zeros(3, 3).requiresGrad_(true));
                                assertThat(sum.requiresGrad()).isTrue();
                            }
                        }
                        assertThat(context.knownWorkerIds()).hasSize(3);
                        return context.id();
                    }
                }));
            }
            for (int rank = 0; rank < 4; rank++) {
                long id = steps.get(rank).join();
                RpcAgent creator = cluster.agent(rank);
                assertThatThrownBy(() -> DistAutograd.getGradients(creator, id))
                        .hasMessage("Could not find autograd context with id: " + id);
            }
            await().atMost(CLEANED).untilAsserted(() -> {
                for (RpcAgent agent : cluster.agents()) {
                    assertThat(contexts(agent)).as("contexts on %s", agent.getWorkerInfo().name()).isZero();
                }
            });
            // each worker's three releases (one to each other worker) all failed their first send
            for (RpcAgent agent : cluster.agents()) {
                assertThat(failedSends(agent)).as("failed sends of %s", agent.getWorkerInfo().name()).isEqualTo(3);
            }
        } // graceful shutdown, failing on any leaked RRef
    }

    @Test
    void aBackwardPassWhoseMessagesAreAllDelayedComputesTheGradients() {
        Duration delay = Duration.ofMillis(150);
        FaultInjection faults = FaultInjection.builder()
                .delay(delay, MessageType.CALL, MessageType.RESPONSE, MessageType.AUTOGRAD_CLEANUP)
                .build();
        try (LocalCluster cluster = faulty(3, faults)) {
            RpcAgent worker0 = cluster.agent(0);
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                // worker0 -> worker1 -> worker2 and back: d/dx (3 * 2x) = 6, each hop's gradients delayed too
                Tensor x = Tensors.rand(2, 2).requiresGrad_(true);
                Tensor y = worker0.rpcSync("worker1", AutogradFunctions::chain, "worker2", x);
                context.backward(List.of(y.sum()));
                assertThat(context.gradients().get(x).equal(Tensors.ones(2, 2).mul(6))).isTrue();
                assertThat(contexts(cluster.agent(2))).isEqualTo(1);
            }
            await().atMost(CLEANED).untilAsserted(() -> {
                for (RpcAgent agent : cluster.agents()) {
                    assertThat(contexts(agent)).as("contexts on %s", agent.getWorkerInfo().name()).isZero();
                }
            });
            assertThat(Long.parseLong(worker0.getDebugInfo().get("transport.faults.delayed"))).isPositive();
        }
    }

    @Test
    void aDelayedReleaseReleasesWhenItArrivesAndOtherContextsGoOn() {
        FaultInjection faults = FaultInjection.builder().delay(Duration.ofSeconds(2), MessageType.AUTOGRAD_CLEANUP).build();
        try (LocalCluster cluster = faulty(2, faults)) {
            RpcAgent worker0 = cluster.agent(0);
            RpcAgent worker1 = cluster.agent(1);
            closeAContextThatReached(worker0, "worker1");
            assertThat(contexts(worker0)).isZero();
            assertThat(contexts(worker1)).as("its release is held 2 s").isEqualTo(1);
            try (DistAutogradContext next = DistAutograd.context(worker0)) {
                Tensor x = Tensors.rand(2).requiresGrad_(true);
                Tensor y = worker0.rpcSync("worker1", AutogradFunctions::doubled, x);
                next.backward(List.of(y.sum()));
                assertThat(next.gradients().get(x).equal(Tensors.ones(2).mul(2))).isTrue();
            }
            await().atMost(CLEANED).until(() -> contexts(worker1) == 0);
        }
    }

    @Test
    void aReleaseNotThroughYetWhenItsCreatorBeginsShutdownIsDelivered() throws Exception {
        // RRefParameterServer with four trainers hung in 2 of 3 runs: a trainer closed its last
        // context and began shutdown before the release got through, which was then dropped (its
        // worker "not a member any more" once this agent stopped running), so the server kept
        // lending its model to a step that had ended, the other trainers waited for their turn,
        // and every worker waited for them in shutdown
        FaultInjection faults = FaultInjection.builder().failSends(3, MessageType.AUTOGRAD_CLEANUP).build();
        try (LocalCluster cluster = faulty(2, faults)) {
            RpcAgent server = cluster.agent(0);
            RpcAgent trainer = cluster.agent(1);
            closeAContextThatReached(trainer, "worker0"); // its release is sent again after 50, 100, 200 ms
            assertThat(contexts(server)).isEqualTo(1);

            CompletableFuture<Void> leaving = CompletableFuture.runAsync(trainer::shutdown);

            await().atMost(CLEANED).until(() -> contexts(server) == 0);
            assertThat(leaving).isNotDone(); // graceful: it waits for the server to shut down too
            server.shutdown();
            leaving.get(CLEANED.toSeconds(), TimeUnit.SECONDS);
        }
    }

    @Test
    void anAnswerThatComesAfterItsContextClosedDoesNotBringItBack() {
        FaultInjection faults = FaultInjection.builder().delay(Duration.ofMillis(500), MessageType.RESPONSE).build();
        try (LocalCluster cluster = faulty(2, faults)) {
            RpcAgent worker0 = cluster.agent(0);
            RpcFuture<Tensor> late;
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                late = worker0.rpcAsync("worker1", AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
            }
            assertThat(late.await().requiresGrad()).isTrue();
            assertThat(contexts(worker0)).isZero();
            await().atMost(CLEANED).until(() -> contexts(cluster.agent(1)) == 0);
        }
    }

    /**
     * Fault injection keeps a release behind the calls of its context sent before it (they are
     * ordered), but the callee handles them on threads of their own, so a release may still be
     * handled first. Sending the release of the context worker0 opens next before its call makes
     * that order certain.
     */
    @Test
    void aCallHandledAfterItsContextsReleaseDoesNotBringItBack() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent worker0 = cluster.agent(0);
            RpcAgent worker1 = cluster.agent(1);
            long next = releaseTheNextContext(worker0, worker0, "worker1");
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThat(context.id()).isEqualTo(next);
                Tensor y = worker0.rpcSync("worker1", AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
                assertThat(y.requiresGrad()).isTrue();
                assertThat(contexts(worker1)).as("the call ran outside its released context").isZero();
            }
            assertThat(DistAutograd.debugInfo(worker1)).containsEntry("num_released_contexts_remembered", "1");
        }
    }

    /**
     * As above, for a worker the context reaches only through a nested call (worker0 -> worker1 ->
     * worker2): the release worker1 passed on is remembered there as the creator's own would be.
     */
    @Test
    void aNestedCallHandledAfterAReleasePassedOnDoesNotBringItBack() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            RpcAgent worker0 = cluster.agent(0);
            RpcAgent worker2 = cluster.agent(2);
            long next = releaseTheNextContext(worker0, cluster.agent(1), "worker2"); // as worker1 passes it on
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThat(context.id()).isEqualTo(next);
                worker0.rpcSync("worker1", AutogradFunctions::chain, "worker2", Tensors.rand(2).requiresGrad_(true));
                assertThat(contexts(cluster.agent(1))).isEqualTo(1);
                assertThat(contexts(worker2)).as("the nested call ran outside its released context").isZero();
            }
            assertThat(DistAutograd.debugInfo(worker2)).containsEntry("num_released_contexts_remembered", "1");
            await().atMost(CLEANED).until(() -> contexts(cluster.agent(1)) == 0);
        }
    }

    /**
     * A handler that goes on after its context left its worker (here it waits for that): the call
     * it makes then is not of the context, so the worker it reaches holds nothing of it (its
     * release passed that worker by before the call was made).
     */
    @Test
    void aNestedCallMadeAfterItsContextLeftItsWorkerGoesOutsideIt() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            RpcAgent worker0 = cluster.agent(0);
            RpcFuture<Tensor> late;
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                late = worker0.rpcAsync("worker1", AutogradFunctions::chainOnceReleased, "worker2",
                        Tensors.rand(2).requiresGrad_(true));
                await().atMost(CLEANED).until(() -> contexts(cluster.agent(1)) == 1);
            }
            late.await();
            for (RpcAgent agent : cluster.agents()) {
                assertThat(contexts(agent)).as("contexts on %s", agent.getWorkerInfo().name()).isZero();
            }
        }
    }

    /**
     * worker1 never gets its release of worker0's context through to worker2, which the context
     * reached through it; worker0's next context that reaches worker2 ends it there when it closes:
     * its release says every context worker0 opened before was closed.
     */
    @Test
    void aContextLeftOnAWorkerEndsThereWithALaterReleaseOfItsCreator() {
        FaultInjection lostReleases = FaultInjection.builder().failSends(1_000_000, MessageType.AUTOGRAD_CLEANUP).build();
        try (DynamicWorld world = DynamicWorld.start()) {
            RpcAgent worker0 = world.join(0, 0);
            RpcAgent worker1 = world.join(1, 0, b -> b.faultInjection(lostReleases));
            RpcAgent worker2 = world.join(2, 0);
            await().atMost(CLEANED).until(() -> worker0.getWorkerInfos().size() == 3 && worker2.getWorkerInfos().size() == 3);
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                worker0.rpcSync("worker1", AutogradFunctions::chain, "worker2", Tensors.rand(2).requiresGrad_(true));
            }
            await().atMost(CLEANED).until(() -> contexts(worker1) == 0 && undelivered(worker1) == 1);
            assertThat(contexts(worker2)).as("worker1's release did not get through").isEqualTo(1);

            try (DistAutogradContext next = DistAutograd.context(worker0)) {
                worker0.rpcSync("worker2", AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
                assertThat(contexts(worker2)).isEqualTo(2);
            }
            await().atMost(CLEANED).until(() -> contexts(worker2) == 0);
            assertThat(undelivered(worker1)).as("still trying: worker2 is a member").isEqualTo(1);
        }
    }

    @Test
    void aReleaseLostOnItsFirstSixSendsStillEndsItsContext() {
        // as many sends as RetriedSends makes of a message: the release is sent again after those too
        try (LocalCluster cluster = withAClosedContext(6)) {
            // sent at 0, 50, 150, 350, 750 and 1,550 ms (each failed), then at 3,150 ms
            await().atMost(CLEANED).until(() -> contexts(cluster.agent(1)) == 0);
            assertThat(failedSends(cluster.agent(0))).isEqualTo(6);
            await().atMost(CLEANED).until(() -> undelivered(cluster.agent(0)) == 0);
        }
    }

    /**
     * Releases that never get through wait, one per context, in one queue for their worker, and
     * travel together; they are dropped when that worker leaves (nothing of theirs is left there).
     */
    @Test
    void releasesThatNeverGetThroughWaitTogetherUntilTheirWorkerLeaves() {
        FaultInjection faults = FaultInjection.builder().failSends(1_000_000, MessageType.AUTOGRAD_CLEANUP).build();
        try (DynamicWorld world = DynamicWorld.start()) {
            RpcAgent worker0 = world.join(0, 0, b -> b.faultInjection(faults));
            RpcAgent worker1 = world.join(1, 0);
            await().atMost(CLEANED).until(() -> worker0.getWorkerInfos().size() == 2);
            for (int i = 0; i < 3; i++) {
                closeAContextThatReached(worker0, "worker1");
            }
            await().atMost(CLEANED).until(() -> failedSends(worker0) >= 7); // past the first 1.55 s of tries
            assertThat(undelivered(worker0)).isEqualTo(3);
            assertThat(contexts(worker1)).isEqualTo(3);
            assertThat(failedSends(worker0)).as("one message per try, for all three").isLessThan(14);

            worker1.shutdown(); // leaves gracefully, with what it held
            await().atMost(CLEANED).until(() -> undelivered(worker0) == 0);
        }
    }

    @Test
    void releasesLostOnEveryTryEndWhenTheirWorkerIsLost() {
        try (LocalCluster cluster = withAClosedContext(1_000_000)) {
            RpcAgent worker0 = cluster.agent(0);
            await().atMost(CLEANED).until(() -> undelivered(worker0) == 1);
            assertThat(contexts(cluster.agent(1))).as("no release reached worker1").isEqualTo(1);

            cluster.agent(1).shutdown(false, Duration.ZERO); // lost: it holds nothing any more
            await().atMost(CLEANED).until(() -> undelivered(worker0) == 0);
            worker0.shutdown(false, Duration.ZERO);
        }
    }

    /**
     * Releases on worker {@code to}, as {@code from} would (the creator, or a worker passing it on),
     * the context {@code creator} opens next, before it is opened; returns its id (learnt by opening
     * and closing one that reaches no one).
     */
    private static long releaseTheNextContext(RpcAgent creator, RpcAgent from, String to) {
        long next;
        try (DistAutogradContext context = DistAutograd.context(creator)) {
            next = context.id() + 1;
        }
        release(from, to, next, creator.getIncarnation(), 0);
        return next;
    }

    /** Two workers whose first {@code failedReleases} releases fail to send; worker0 closed a context that reached worker1. */
    private static LocalCluster withAClosedContext(int failedReleases) {
        LocalCluster cluster = faulty(2, FaultInjection.builder().failSends(failedReleases, MessageType.AUTOGRAD_CLEANUP).build());
        closeAContextThatReached(cluster.agent(0), "worker1");
        return cluster;
    }

    /** Opens a context on {@code from}, calls {@code to} in it with a tensor requiring grad, and closes it. */
    private static void closeAContextThatReached(RpcAgent from, String to) {
        try (DistAutogradContext context = DistAutograd.context(from)) {
            from.rpcSync(to, AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
        }
    }

    private static int undelivered(RpcAgent agent) {
        return Integer.parseInt(DistAutograd.debugInfo(agent).get("num_releases_undelivered"));
    }

    /** Calls {@code from}'s release of one context on worker {@code to}, as the creator or a worker passing it on would. */
    static void release(RpcAgent from, String to, long contextId, long creatorIncarnation, long closedBelow) {
        from.rpcSync(to, GradientCalls::release, new long[] {contextId}, new long[] {creatorIncarnation},
                new long[] {closedBelow}, from.getWorkerInfo().id());
    }
}
