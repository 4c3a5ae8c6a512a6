package dev.ferry.distributed;

import dev.ferry.distributed.autograd.AutogradFunctions;
import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.optim.DistributedOptimizer;
import dev.ferry.distributed.optim.TrainingFunctions;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.LocalCluster;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.optim.SGD;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Workers whose application is a few classes still run distributed autograd, remote modules and
 * the distributed optimizer: ferry-distributed's entry points are trusted
 * ({@link dev.ferry.rpc.spi.TrustedFunctions}) and its tensor types have registered ids. Ferry's own
 * functions stay refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestrictedWorkersTest {

    @Test
    void theDistributedStackWorksUnderNarrowAllowLists() {
        try (LocalCluster cluster = LocalCluster.start(3, b -> b.applicationPackages(List.of(
                AutogradFunctions.class.getName(), TrainingFunctions.class.getName(),
                RestrictedWorkersTest.class.getName())))) {
            RpcAgent worker0 = cluster.agent(0);
            try (RemoteModule<Linear> hidden = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden);
                 DistributedOptimizer optimizer = new DistributedOptimizer(worker0, RestrictedWorkersTest::sgd,
                         hidden.remoteParameters());
                 DistAutogradContext context = DistAutograd.context(worker0)) {
                Tensor x = Tensors.rand(2, 3).requiresGrad_(true);
                Tensor through = worker0.rpcSync("worker2", AutogradFunctions::chain, "worker1", x);
                Tensor loss = hidden.forward(through).sum();
                List<RRef<Tensor>> params = hidden.remoteParameters();
                Tensor before = params.get(1).toHere();

                context.backward(List.of(loss));
                optimizer.step(context.id());

                assertThat(context.gradients().get(x).shape()).containsExactly(2, 3);
                assertThat(params.get(1).toHere().allclose(before.sub(Tensors.ones(4).mul(2 * 0.1)), 1e-5, 1e-6))
                        .as("the bias stepped by lr * its gradient (2 rows)").isTrue();
            }
            assertThatThrownBy(() -> worker0.rpcSync("worker1", Tensors::ones, new int[] {2}))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION))
                    .hasMessageContaining("refused (Ferry's own class): dev.ferry.tensor.Tensors");
        }
    }

    public static SGD sgd(List<Tensor> params) {
        return new SGD(params, 0.1);
    }
}
