package dev.ferry.distributed.autograd;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.testing.DynamicWorld;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A creator of distributed autograd contexts that crashes and restarts: its new incarnation's
 * context ids start over, so an id alone cannot tell its contexts from the old one's. Releases
 * carry the creator's incarnation: one of the old incarnation's that comes late (passed on by a
 * worker that was still sending it) ends nothing of the new one's, and one remembered does not
 * keep the new one's calls out of their context.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestartedCreatorTest {
    private static final Duration STEP = Duration.ofSeconds(30);

    @Test
    void aLateReleaseOfTheEarlierIncarnationEndsNothingOfTheNewOne() {
        try (DynamicWorld world = DynamicWorld.start()) {
            Restart restart = restart(world);
            try (DistAutogradContext context = DistAutograd.context(restart.again)) {
                assertThat(context.id()).as("the ids start over").isEqualTo(restart.oldContext);
                Tensor x = Tensors.rand(2, 2).requiresGrad_(true);
                Tensor y = restart.again.rpcSync("worker1", AutogradFunctions::doubled, x);

                FaultyAgentDistAutogradTest.release(restart.worker2, "worker1", restart.oldContext,
                        restart.oldIncarnation, 1); // the old context's release, passed on late
                assertThat(contexts(restart.worker1)).isEqualTo(1);
                context.backward(List.of(y.sum()));
                assertThat(context.gradients().get(x).equal(Tensors.ones(2, 2).mul(2))).isTrue();
            }
            await().atMost(STEP).until(() -> contexts(restart.worker1) == 0);
        }
    }

    @Test
    void aRememberedReleaseOfTheEarlierIncarnationKeepsNoCallOfTheNewOneOutside() {
        try (DynamicWorld world = DynamicWorld.start()) {
            Restart restart = restart(world);
            FaultyAgentDistAutogradTest.release(restart.worker2, "worker1", restart.oldContext,
                    restart.oldIncarnation, 1); // passed on late: remembered after the old one was lost
            assertThat(DistAutograd.debugInfo(restart.worker1).get("num_released_contexts_remembered")).isNotEqualTo("0");

            try (DistAutogradContext context = DistAutograd.context(restart.again)) {
                assertThat(context.id()).isEqualTo(restart.oldContext);
                Tensor x = Tensors.rand(2, 2).requiresGrad_(true);
                Tensor y = restart.again.rpcSync("worker1", AutogradFunctions::doubled, x);
                assertThat(contexts(restart.worker1)).as("the call ran in its context").isEqualTo(1);
                context.backward(List.of(y.sum()));
                assertThat(context.gradients().get(x).equal(Tensors.ones(2, 2).mul(2))).isTrue();
            }
            await().atMost(STEP).until(() -> contexts(restart.worker1) == 0);
        }
    }

    /** worker0's first incarnation, whose first context reached worker1 and was closed, and its second. */
    private record Restart(RpcAgent again, RpcAgent worker1, RpcAgent worker2, long oldContext, long oldIncarnation) {
    }

    private static Restart restart(DynamicWorld world) {
        RpcAgent old = world.join(0, 0);
        RpcAgent worker1 = world.join(1, 0);
        RpcAgent worker2 = world.join(2, 0);
        await().atMost(STEP).until(() -> old.getWorkerInfos().size() == 3 && worker1.getWorkerInfos().size() == 3);
        long oldContext;
        try (DistAutogradContext context = DistAutograd.context(old)) {
            oldContext = context.id();
            old.rpcSync("worker1", AutogradFunctions::doubled, Tensors.rand(2, 2).requiresGrad_(true));
        }
        await().atMost(STEP).until(() -> contexts(worker1) == 0);
        long oldIncarnation = old.getIncarnation();
        old.shutdown(false, Duration.ZERO); // crashes

        RpcAgent again = world.join(0, 0);
        assertThat(again.getIncarnation()).isGreaterThan(oldIncarnation);
        await().atMost(STEP).until(() -> worker1.getWorkerInfos().size() == 3);
        return new Restart(again, worker1, worker2, oldContext, oldIncarnation);
    }

    private static int contexts(RpcAgent agent) {
        return Integer.parseInt(DistAutograd.debugInfo(agent).get("num_autograd_contexts"));
    }
}
