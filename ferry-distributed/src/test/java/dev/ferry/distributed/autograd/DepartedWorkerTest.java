package dev.ferry.distributed.autograd;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.DynamicWorld;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A worker that leaves a world without a fixed size gracefully, while distributed autograd
 * contexts span it: a backward pass that needs it fails at once naming it (not by the RPC
 * timeout, 60 s), and the contexts it created are released on the workers they reached. The lost
 * (killed) worker's counterpart is {@link LostCreatorTest}. The store lives in the test, as an
 * external one would, so no worker holds it; world size 0: no fixed size, so any member may leave.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DepartedWorkerTest {
    private static final Duration STEP = Duration.ofSeconds(30);

    @Test
    void aBackwardPassThroughADepartedWorkerFailsPromptlyNamingIt() {
        try (DynamicWorld world = DynamicWorld.start()) {
            RpcAgent caller = world.join(0, 0);
            RpcAgent leaver = world.join(1, 0);
            RpcAgent other = world.join(2, 0);
            await().atMost(STEP).until(() -> caller.getWorkerInfos().size() == 3 && other.getWorkerInfos().size() == 3);
            try (DistAutogradContext context = DistAutograd.context(caller)) {
                // worker0 -> worker1 -> worker2: the pass must go back through worker1.
                Tensor x = Tensors.rand(2, 2).requiresGrad_(true);
                Tensor y = caller.rpcSync("worker1", AutogradFunctions::chain, "worker2", x);
                leaver.shutdown(); // leaves gracefully with the context's part on it; the others run on
                assertThat(leaver.isRunning()).isFalse();

                long start = System.nanoTime();
                assertThatThrownBy(() -> context.backward(List.of(y.sum())))
                        .isInstanceOfSatisfying(RpcException.class, e -> {
                            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                            assertThat(e.getMessage()).contains("worker1 left the group");
                        });
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("promptly, not by the RPC timeout")
                        .isLessThan(Duration.ofSeconds(10));
            }
            assertThat(contexts(caller)).isZero();
        }
    }

    @Test
    void contextsADepartedWorkerCreatedAreReleasedWhereverTheyReached() {
        try (DynamicWorld world = DynamicWorld.start()) {
            RpcAgent leaver = world.join(0, 0);
            RpcAgent middle = world.join(1, 0);
            RpcAgent last = world.join(2, 0);
            await().atMost(STEP).until(() -> leaver.getWorkerInfos().size() == 3 && last.getWorkerInfos().size() == 3);
            // worker0 -> worker1 -> worker2, opened on a thread of its own and never closed: worker2 hears
            // of the context only from worker1.
            CompletableFuture.runAsync(() -> {
                DistAutograd.context(leaver);
                leaver.rpcSync("worker1", AutogradFunctions::chain, "worker2", Tensors.rand(2, 2).requiresGrad_(true));
            }).join();
            assertThat(contexts(middle)).isEqualTo(1);
            assertThat(contexts(last)).isEqualTo(1);

            leaver.shutdown(); // leaves gracefully; only it could have closed its context

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(contexts(middle)).as("worker1").isZero();
                assertThat(contexts(last)).as("worker2").isZero();
            });
        }
    }

    private static int contexts(RpcAgent agent) {
        return Integer.parseInt(DistAutograd.debugInfo(agent).get("num_autograd_contexts"));
    }
}
