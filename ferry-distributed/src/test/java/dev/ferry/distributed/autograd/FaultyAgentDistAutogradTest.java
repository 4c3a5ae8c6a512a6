package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.GradientCalls;
import dev.ferry.rpc.FaultInjection;
import dev.ferry.rpc.MessageType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.MessageKinds;
import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * PyTorch's {@code FaultyAgentDistAutogradTest} on {@link FaultInjection}: every worker of a group
 * over loopback TCP shares the faults, as PyTorch's faulty agent's do. PyTorch's
 * {@code CLEANUP_AUTOGRAD_CONTEXT_REQ} is {@link MessageType#AUTOGRAD_CLEANUP}. Beyond PyTorch's two
 * scenarios: a backward pass whose calls and answers are all delayed, a delayed release, messages
 * of a context that come after it ended, and a release lost on every try (the bound of the
 * retries, and what ends such a context).
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
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                worker0.rpcSync("worker1", AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
            }
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
            long before;
            try (DistAutogradContext first = DistAutograd.context(worker0)) {
                before = first.id(); // reached no one: its release goes nowhere
            }
            worker0.rpcSync("worker1", GradientCalls::release, before + 1, 0);
            try (DistAutogradContext next = DistAutograd.context(worker0)) {
                assertThat(next.id()).isEqualTo(before + 1);
                Tensor y = worker0.rpcSync("worker1", AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
                assertThat(y.requiresGrad()).isTrue();
                assertThat(contexts(worker1)).as("the call ran outside its released context").isZero();
            }
            assertThat(DistAutograd.debugInfo(worker1)).containsEntry("num_released_contexts_remembered", "1");

            worker0.shutdown(false, Duration.ZERO); // lost: a new incarnation would reuse its context ids
            await().atMost(CLEANED).until(() ->
                    DistAutograd.debugInfo(worker1).get("num_released_contexts_remembered").equals("0"));
            worker1.shutdown(false, Duration.ZERO);
        }
    }

    @Test
    void aReleaseLostOnEveryTryLeavesTheContextUntilItsCreatorIsLost() {
        // the first send and its 5 retries
        FaultInjection faults = FaultInjection.builder().failSends(6, MessageType.AUTOGRAD_CLEANUP).build();
        try (LocalCluster cluster = faulty(2, faults)) {
            RpcAgent worker0 = cluster.agent(0);
            RpcAgent worker1 = cluster.agent(1);
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                worker0.rpcSync("worker1", AutogradFunctions::doubled, Tensors.rand(2).requiresGrad_(true));
            }
            await().atMost(CLEANED).until(() -> failedSends(worker0) == 6);
            assertThat(contexts(worker1)).as("no release reached worker1").isEqualTo(1);

            worker0.shutdown(false, Duration.ZERO); // lost: worker1 releases what it created
            await().atMost(CLEANED).until(() -> contexts(worker1) == 0);
            worker1.shutdown(false, Duration.ZERO);
        }
    }
}
