package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.ContextContainer;
import dev.ferry.distributed.ThreeWorkers;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Backward passes across three workers over loopback sockets, after PyTorch's
 * {@code dist_autograd_test.py}: gradients through a remote call, a nested chain, a remote
 * worker's own leaf, retained graphs, concurrent contexts, release, and the errors.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DistAutogradTest extends ThreeWorkers {
    @Test
    void gradientsComeBackThroughARemoteCall() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t1 = Tensors.rand(3, 3).requiresGrad_(true);
            Tensor t2 = Tensors.rand(3, 3).requiresGrad_(true);
            Tensor result = worker0.rpcSync("worker1", AutogradFunctions::add, t1, t2);

            assertThat(result.gradFn().name()).isEqualTo("RecvRpcBackward");
            context.backward(List.of(result.sum()));

            Map<Tensor, Tensor> grads = context.gradients();
            assertThat(grads).hasSize(2);
            assertThat(grads.get(t1).equal(Tensors.ones(3, 3))).isTrue();
            assertThat(grads.get(t2).equal(Tensors.ones(3, 3))).isTrue();
            assertThat(t1.grad()).as(".grad is left alone").isNull();
            assertThat(context.sendFunctionIds()).hasSize(1);
            assertThat(context.recvFunctionIds()).hasSize(1);
            assertThat(context.knownWorkerIds()).containsExactly(1);
        }
    }

    @Test
    void releaseActionsRunWhenTheContextLeavesTheWorker() {
        long id;
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            id = context.id();
            worker0.rpcSync("worker1", AutogradFunctions::noteRelease);
            assertThat(AutogradFunctions.RELEASED).doesNotContain("worker1:" + id);
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(AutogradFunctions.RELEASED).contains("worker1:" + id));
        java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
        DistAutograd.whenReleased(worker0, id, () -> ran.set(true)); // gone already: at once
        assertThat(ran).isTrue();
    }

    @Test
    void aPassFollowsANestedChainAcrossThreeWorkers() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t = Tensors.rand(2, 3).requiresGrad_(true);
            Tensor out = worker0.rpcSync("worker1", AutogradFunctions::chain, "worker2", t);

            DistAutograd.backward(context.id(), List.of(out.sum()));

            assertThat(out.equal(t.detach().mul(6))).isTrue();
            assertThat(DistAutograd.getGradients(context.id()).get(t).equal(Tensors.ones(2, 3).mul(6))).isTrue();
        }
    }

    @Test
    void aRemoteWorkersLeafGetsItsGradientInItsOwnPartOfTheContext() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor x = Tensors.rand(2, 2).requiresGrad_(true);
            Tensor y = worker0.rpcSync("worker1", AutogradFunctions::timesWeight, x);

            context.backward(List.of(y.sum()));

            assertThat(context.gradients().get(x).equal(Tensors.ones(2, 2).mul(3))).isTrue();
            Tensor weightGrad = worker0.rpcSync("worker1", AutogradFunctions::weightGradient, context.id());
            assertThat(weightGrad.allclose(x.detach())).isTrue();
            assertThat(context.gradients()).doesNotContainKey(weightGrad);
        }
    }

    @Test
    void gradientsFlowThroughAnRRefsValueFetchedWithToHere() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t = Tensors.rand(3).requiresGrad_(true);
            try (RRef<Tensor> doubled = worker0.remote("worker1", AutogradFunctions::doubled, t)) {
                Tensor here = doubled.toHere();

                context.backward(List.of(here.mul(5).sum()));
            }
            assertThat(context.gradients().get(t).equal(Tensors.ones(3).mul(10))).isTrue();
        }
    }

    @Test
    void anOwnerRRefStartsALocalPassWithoutAContextAndADistributedOneWithIt() {
        Tensor t1 = Tensors.ones(3).requiresGrad_(true);
        try (RRef<Tensor> twice = worker0.rref(t1.sum().add(t1.sum()))) {
            DistAutograd.backward(twice);
        }
        assertThat(t1.grad().equal(Tensors.ones(3).mul(2))).isTrue();

        try (DistAutogradContext context = DistAutograd.context(worker0);
             RRef<Tensor> sum = worker0.rref(worker0.rpcSync("worker1", AutogradFunctions::add, t1, t1).sum())) {
            DistAutograd.backward(sum, context.id(), true);
            DistAutograd.backward(sum, context.id(), false);

            assertThat(context.gradients().get(t1).equal(Tensors.ones(3).mul(4))).isTrue();
            assertThatThrownBy(() -> DistAutograd.backward(worker0, sum, 100, false))
                    .hasMessage("Could not find autograd context with id: 100");
        }
    }

    @Test
    void aUserRRefRunsThePassOnItsOwner() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t = Tensors.rand(4).requiresGrad_(true);
            try (RRef<Tensor> sum = worker0.remote("worker1", AutogradFunctions::sumOf, t)) {
                DistAutograd.backward(sum, context.id(), true);
                DistAutograd.backward(sum, context.id(), false);

                assertThat(context.gradients().get(t).equal(Tensors.ones(4).mul(2))).isTrue();
                assertThatThrownBy(() -> DistAutograd.backward(sum))
                        .hasMessage("User RRefs require 'dist_autograd_ctx_id' to be specified");
            }
            try (RRef<String> foo = worker0.remote("worker1", AutogradFunctions::foo)) {
                assertThatThrownBy(() -> DistAutograd.backward(foo, context.id(), false))
                        .isInstanceOf(RpcException.class)
                        .hasMessageContaining("RRef should contain a tensor for .backward()");
            }
        }
    }

    @Test
    void rrefBackwardChecksWhatItIsGiven() {
        try (RRef<Tensor> plain = worker0.rref(Tensors.rand(10));
             RRef<Tensor> notScalar = worker0.rref(Tensors.rand(10).requiresGrad_(true));
             RRef<String> foo = worker0.rref("foo")) {
            assertThatThrownBy(() -> DistAutograd.backward(plain))
                    .hasMessageContaining("does not require grad and does not have a grad_fn");
            assertThatThrownBy(() -> DistAutograd.backward(notScalar))
                    .hasMessageContaining("grad can be implicitly created only for scalar outputs");
            assertThatThrownBy(() -> DistAutograd.backward(foo))
                    .hasMessage("RRef should contain a tensor for .backward()");
        }
    }

    @Test
    void debugInfoCountsContextsPassesAndFunctions() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t = Tensors.rand(3).requiresGrad_(true);
            Tensor out = worker0.rpcSync("worker2", AutogradFunctions::reportingInBackward, t);

            Map<String, String> before = worker0.rpcSync("worker2", AutogradFunctions::debugInfo);
            context.backward(List.of(out.sum()));

            // Other tests' contexts may still be on their way out: counts are at least this one's.
            assertThat(before).containsEntry("num_current_backward_passes", "0");
            for (String key : List.of("num_autograd_contexts", "num_send_functions", "num_recv_functions")) {
                assertThat(Integer.parseInt(before.get(key))).as(key).isPositive();
                assertThat(Integer.parseInt(DistAutograd.debugInfo(worker0).get(key))).as(key).isPositive();
            }
            assertThat(AutogradFunctions.SEEN_IN_BACKWARD.get("worker2"))
                    .as("worker2's part of the pass runs while its backward function reports")
                    .containsEntry("num_current_backward_passes", "1");
            assertThat(DistAutograd.debugInfo(worker0)).containsEntry("num_current_backward_passes", "0");
        }
    }

    @Test
    void theHandlerRunsInTheCallersContext() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            assertThat(worker0.rpcSync("worker1", AutogradFunctions::contextIdSeenByHandler)).isEqualTo(context.id());
            assertThat(context.id() >>> 48).as("the creator's id in the top bits").isZero();
        }
        assertThatThrownBy(() -> worker0.rpcSync("worker1", AutogradFunctions::contextIdSeenByHandler))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("Current thread doesn't have a valid autograd context");
    }

    @Test
    void resultsThatDoNotReachTheLossDoNotHoldUpThePass() {
        // PyTorch's FAST mode waits forever for the gradients of such a send function.
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor used = Tensors.rand(3).requiresGrad_(true);
            Tensor unusedInput = Tensors.rand(3).requiresGrad_(true);
            Tensor plain = Tensors.rand(3);
            worker0.rpcSync("worker2", AutogradFunctions::doubled, unusedInput);
            Tensor loss = worker0.rpcSync("worker1", AutogradFunctions::add, used, plain).sum();

            context.backward(List.of(loss));

            assertThat(context.gradients()).containsOnlyKeys(used);
            assertThat(context.sendFunctionIds()).hasSize(2);
        }
    }

    @Test
    void aFailureInARemotePartOfThePassFailsBackward() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t = Tensors.rand(3).requiresGrad_(true);
            Tensor out = worker0.rpcSync("worker1", AutogradFunctions::failingInBackward, t);

            assertThatThrownBy(() -> context.backward(List.of(out.sum())))
                    .isInstanceOf(RpcException.class)
                    .hasMessageContaining("backward failed on worker1");
        }
    }

    @Test
    void aLocalPathAndARemotePathMeetAtOneNodeWithSavedTensors() {
        // x's node (a product, which saves its inputs) is reached twice: by the local pass from the
        // loss and by the pass worker1's gradients start at the send function. Whichever runs first
        // must not free what the other needs.
        for (int round = 0; round < 20; round++) {
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                Tensor leaf = Tensors.rand(3).requiresGrad_(true);
                Tensor x = leaf.mul(leaf);
                Tensor remote = worker0.rpcSync("worker1", AutogradFunctions::doubled, x);
                Tensor loss = remote.sum().add(x.sum());

                context.backward(List.of(loss));

                // d/dleaf (2 leaf^2 + leaf^2) = 6 leaf
                assertThat(context.gradients().get(leaf).allclose(leaf.detach().mul(6))).isTrue();
            }
        }
    }

    @Test
    void eachLeafGetsItsGradientInItsOwnDtypeAcrossACall() {
        // PyTorch's test_backward_different_dtypes: float32 + float64 on another worker
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor f32 = Tensors.rand(3, 3).requiresGrad_(true);
            Tensor f64 = Tensors.rand(3, 3).to(DType.FLOAT64).requiresGrad_(true);
            Tensor sum = worker0.rpcSync("worker1", AutogradFunctions::add, f32, f64);

            context.backward(List.of(sum.sum()));

            assertThat(context.gradients().get(f32).dtype()).isEqualTo(DType.FLOAT32);
            assertThat(context.gradients().get(f64).dtype()).isEqualTo(DType.FLOAT64);
            assertThat(context.gradients().get(f32).equal(Tensors.ones(3, 3))).isTrue();
        }
    }

    @Test
    void withoutRetainGraphASecondPassFailsAsInPyTorch() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor leaf = Tensors.rand(3).requiresGrad_(true);
            Tensor loss = leaf.mul(leaf).sum().add(worker0.rpcSync("worker1", AutogradFunctions::doubled, leaf).sum());

            context.backward(List.of(loss));

            assertThatThrownBy(() -> context.backward(List.of(loss)))
                    .hasMessageContaining("backward through the graph a second time");
        }
    }

    @Test
    void aRetainedGraphCanBeDifferentiatedTwice() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Tensor t1 = Tensors.rand(3).requiresGrad_(true);
            Tensor loss = worker0.rpcSync("worker1", AutogradFunctions::doubled, t1).sum();

            context.backward(List.of(loss), true);
            context.backward(List.of(loss));

            assertThat(context.gradients().get(t1).equal(Tensors.ones(3).mul(4))).isTrue();
        }
    }

    @Test
    void concurrentContextsKeepTheirGradientsApart() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            Callable<Boolean> pass = () -> {
                try (DistAutogradContext context = DistAutograd.context(worker0)) {
                    Tensor t = Tensors.rand(4).requiresGrad_(true);
                    Tensor loss = worker0.rpcSync("worker2", AutogradFunctions::doubled, t).sum();
                    context.backward(List.of(loss));
                    return context.gradients().size() == 1
                            && context.gradients().get(t).equal(Tensors.ones(4).mul(2));
                }
            };
            List<Future<Boolean>> results = threads.invokeAll(List.of(pass, pass, pass, pass, pass, pass, pass, pass));
            for (Future<Boolean> result : results) {
                assertThat(result.get(30, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void closingAContextReleasesItOnEveryWorkerItReached() {
        long id;
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            id = context.id();
            Tensor t = Tensors.rand(2).requiresGrad_(true);
            worker0.rpcSync("worker1", AutogradFunctions::chain, "worker2", t);
            for (String worker : List.of("worker1", "worker2")) {
                assertThat(worker0.rpcSync(worker, AutogradFunctions::contextCount)).isGreaterThanOrEqualTo(1);
            }
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (String worker : List.of("worker1", "worker2")) {
                assertThat(worker0.rpcSync(worker, AutogradFunctions::contextCount)).as(worker).isZero();
            }
        });
        assertThat(ContextContainer.of(worker0).contexts()).isEmpty();
        assertThatThrownBy(() -> DistAutograd.getGradients(worker0, id))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Could not find autograd context with id: " + id);
        assertThatThrownBy(() -> DistAutograd.backward(worker0, 100, List.of(), false))
                .hasMessage("Could not find autograd context with id: 100");
    }

    @Test
    void errorsSayWhatIsWrong() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            assertThatThrownBy(() -> DistAutograd.context(worker0))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("Already have an autograd context id for this thread.");
            assertThatThrownBy(() -> context.backward(List.of(Tensors.rand(3))))
                    .hasMessageContaining("does not require grad and does not have a grad_fn");
            assertThatThrownBy(() -> context.backward(List.of(Tensors.rand(3).requiresGrad_(true))))
                    .hasMessageContaining("grad can be implicitly created only for scalar outputs");
        }
        assertThatThrownBy(() -> DistAutograd.currentContextId())
                .hasMessageContaining("Current thread doesn't have a valid autograd context");
    }

    @Test
    void aClosedContextIsGoneForItsHandleToo() {
        // PyTorch: after `with dist_autograd.context() as id:` ends, backward(id) and
        // get_gradients(id) fail; the handle used to run a local pass into the dead context and
        // hand its gradients out, and a pass reaching another worker failed there, as its error
        DistAutogradContext context = DistAutograd.context(worker0);
        Tensor t = Tensors.rand(3).requiresGrad_(true);
        Tensor remoteLoss = worker0.rpcSync("worker1", AutogradFunctions::doubled, t).sum();
        context.backward(List.of(t.mul(2).sum()), true);
        assertThat(context.gradients()).hasSize(1);
        context.close();
        String gone = "Could not find autograd context with id: " + context.id();

        assertThatThrownBy(() -> context.backward(List.of(t.mul(3).sum())))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(gone);
        assertThatThrownBy(() -> context.backward(List.of(remoteLoss)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(gone);
        assertThatThrownBy(context::gradients).isInstanceOf(IllegalArgumentException.class).hasMessage(gone);
        assertThatThrownBy(() -> DistAutograd.getGradients(worker0, context.id())).hasMessage(gone);
        assertThat(DistAutograd.debugInfo(worker0)).containsEntry("num_current_backward_passes", "0");
    }

    @Test
    void aContextClosedOnAnotherThreadLeavesBothThreadsTheirOwn() throws Exception {
        // closing a context from a callback or an executor ran the binding's restore there: that
        // thread lost its own context, and the opening thread kept the dead one for good ("Already
        // have an autograd context id for this thread." at its next context())
        DistAutogradContext handedOff = DistAutograd.context(worker0);
        ExecutorService other = Executors.newSingleThreadExecutor();
        try {
            other.submit(() -> {
                try (DistAutogradContext own = DistAutograd.context(worker0)) {
                    handedOff.close();
                    assertThat(DistAutograd.currentContextId()).isEqualTo(own.id());
                }
            }).get(10, TimeUnit.SECONDS);
        } finally {
            other.shutdownNow();
        }
        assertThatThrownBy(DistAutograd::currentContextId)
                .hasMessageContaining("Current thread doesn't have a valid autograd context");
        try (DistAutogradContext next = DistAutograd.context(worker0)) {
            Tensor t = Tensors.rand(3).requiresGrad_(true);
            Tensor loss = worker0.rpcSync("worker1", AutogradFunctions::doubled, t).sum();
            next.backward(List.of(loss));
            assertThat(next.gradients().get(t).equal(Tensors.ones(3).mul(2))).isTrue();
        }
    }

    @Test
    void backwardNeedsRoots() {
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            assertThatThrownBy(() -> context.backward(List.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("No tensors provided for gradient computation.");
            assertThatThrownBy(() -> context.backward(null))
                    .isInstanceOf(NullPointerException.class).hasMessage("roots");
        }
    }

    @Test
    void theInProcessBackendRunsDistributedPassesToo() {
        try (LocalCluster inProcess = LocalCluster.start(2, BackendType.IN_PROCESS);
             DistAutogradContext context = DistAutograd.context(inProcess.agent(0))) {
            Tensor t = Tensors.rand(3).requiresGrad_(true);
            Tensor out = inProcess.agent(0).rpcSync("worker1", AutogradFunctions::doubled, t);

            context.backward(List.of(out.sum()));

            assertThat(context.gradients().get(t).equal(Tensors.ones(3).mul(2))).isTrue();
        }
    }
}
