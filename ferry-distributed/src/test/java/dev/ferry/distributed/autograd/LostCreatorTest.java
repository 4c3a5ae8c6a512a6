package dev.ferry.distributed.autograd;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.LocalCluster;
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
 * A worker that dies without closing its contexts: the workers they reached release them (those
 * it talked to directly, and those reached only through a nested call), and keep the contexts of
 * workers still alive.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostCreatorTest {

    @Test
    void contextsOfALostCreatorAreReleasedWhereverTheyReached() {
        try (LocalCluster cluster = LocalCluster.start(4)) {
            RpcAgent creator = cluster.agent(0);
            // worker0 -> worker1 -> worker2: worker2 hears of the context only from worker1. Opened on
            // a thread of its own and never closed, as by a worker that dies mid-step.
            CompletableFuture.runAsync(() -> {
                DistAutograd.context(creator);
                creator.rpcSync("worker1", AutogradFunctions::chain, "worker2", Tensors.rand(2, 2).requiresGrad_(true));
            }).join();
            RpcAgent survivor = cluster.agent(3);
            try (DistAutogradContext kept = DistAutograd.context(survivor)) {
                survivor.rpcSync("worker1", AutogradFunctions::chain, "worker2", Tensors.rand(2).requiresGrad_(true));
                assertThat(contexts(cluster, 1)).isEqualTo(2);
                assertThat(contexts(cluster, 2)).isEqualTo(2);

                creator.shutdown(false, Duration.ZERO); // dies: its context is never closed

                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                    assertThat(contexts(cluster, 1)).as("worker1").isEqualTo(1);
                    assertThat(contexts(cluster, 2)).as("worker2").isEqualTo(1);
                });
                assertThat(DistAutograd.getGradients(survivor, kept.id())).isEmpty();
            }
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(contexts(cluster, 1)).isZero();
                assertThat(contexts(cluster, 2)).isZero();
            });
            // a graceful shutdown needs every worker, and worker0 is gone
            for (int rank = 1; rank < 4; rank++) {
                cluster.agent(rank).shutdown(false, Duration.ZERO);
            }
        }
    }

    @Test
    void aBackwardPassThroughALostWorkerFailsPromptlyNamingIt() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            RpcAgent caller = cluster.agent(0);
            try (DistAutogradContext context = DistAutograd.context(caller)) {
                Tensor y = caller.rpcSync("worker1", AutogradFunctions::doubled, Tensors.rand(2, 2).requiresGrad_(true));
                cluster.agent(1).shutdown(false, Duration.ZERO); // dies with the context's part on it

                long start = System.nanoTime();
                assertThatThrownBy(() -> context.backward(List.of(y.sum())))
                        .isInstanceOfSatisfying(RpcException.class, e -> {
                            assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE);
                            assertThat(e.getMessage()).contains("worker1");
                        });
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("promptly, not by a timeout")
                        .isLessThan(Duration.ofSeconds(10));
            }
            cluster.agent(0).shutdown(false, Duration.ZERO);
            cluster.agent(2).shutdown(false, Duration.ZERO);
        }
    }

    private static int contexts(LocalCluster cluster, int rank) {
        return Integer.parseInt(DistAutograd.debugInfo(cluster.agent(rank)).get("num_autograd_contexts"));
    }
}
