package dev.ferry.distributed.autograd;

import dev.ferry.distributed.internal.ContextContainer;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ContextContainerTest {

    @Test
    void anAgentThatUsedDistributedAutogradCanBeCollectedAfterShutdown() {
        WeakReference<RpcAgent> agent = useAndShutDown();

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            System.gc();
            return agent.get() == null;
        });
    }

    private static WeakReference<RpcAgent> useAndShutDown() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent worker0 = cluster.agent(0);
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                Tensor t = Tensors.rand(3).requiresGrad_(true);
                context.backward(List.of(worker0.rpcSync("worker1", AutogradFunctions::doubled, t).sum()));
                assertThat(ContextContainer.of(worker0).contexts()).hasSize(1);
            }
            return new WeakReference<>(worker0);
        }
    }
}
