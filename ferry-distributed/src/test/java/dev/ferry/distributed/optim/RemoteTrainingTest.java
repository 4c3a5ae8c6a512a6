package dev.ferry.distributed.optim;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.distributed.ThreeWorkers;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcException;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Linear;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.optim.SGD;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link RemoteModule} and {@link DistributedOptimizer} on three workers over loopback, after
 * PyTorch's {@code dist_optimizer_test.py} and {@code remote_module_test.py}: a model split over
 * two workers takes the same step as the same model trained locally.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteTrainingTest extends ThreeWorkers {
    @Test
    void aRemoteModuleComputesWhatTheLocalOneDoes() {
        try (RemoteModule<Linear> remote = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden)) {
            Tensor x = Tensors.rand(5, 3);

            assertThat(remote.forward(x).allclose(TrainingFunctions.hidden().forward(x))).isTrue();
            assertThat(remote.forwardAsync(x).await().allclose(TrainingFunctions.hidden().forward(x))).isTrue();
            assertThat(remote.owner().name()).isEqualTo("worker1");
            assertThat(remote.remoteParameters()).hasSize(2).allSatisfy(p -> assertThat(p.owner().name()).isEqualTo("worker1"));
        }
    }

    @Test
    void stepsOfTwoOptimizersOverOneWorkersParametersNeverInterleave() throws Exception {
        try (RemoteModule<Linear> shared = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden);
             DistributedOptimizer first = new DistributedOptimizer(worker0, TrainingFunctions::overlapProbe,
                     shared.remoteParameters());
             DistributedOptimizer second = new DistributedOptimizer(worker0, TrainingFunctions::overlapProbe,
                     shared.remoteParameters());
             DistAutogradContext context = DistAutograd.context(worker0)) {
            context.backward(List.of(shared.forward(Tensors.ones(2, 3)).sum()));
            // Two trainers' steps at once, each over the same parameters of worker1.
            var stepping = java.util.concurrent.CompletableFuture.runAsync(() -> first.step(context.id()));
            second.step(context.id());
            stepping.get(30, TimeUnit.SECONDS);
            assertThat(worker0.rpcSync("worker1", TrainingFunctions::mostAtOnce)).isEqualTo(1);
        }
    }

    /**
     * The forward pass run before the context opened (a common slip): PyTorch steps on in silence
     * and the loss never falls; Ferry says so, once, with what to do.
     */
    @Test
    void aStepThatFindsNoGradientAnywhereSaysSoOnce() {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (RemoteModule<Linear> remote = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden);
             DistributedOptimizer optimizer = new DistributedOptimizer(worker0, params -> new SGD(params, 0.1),
                     remote.remoteParameters())) {
            Tensor x = Tensors.rand(5, 3);
            List<Double> losses = new ArrayList<>();
            for (int step = 0; step < 2; step++) {
                Tensor out = remote.forward(x); // outside the context: its backward cannot reach worker1
                try (DistAutogradContext context = DistAutograd.context(worker0)) {
                    Tensor loss = out.square().mean();
                    context.backward(List.of(loss));
                    optimizer.step(context.id());
                    losses.add(loss.item());
                }
            }
            assertThat(losses.get(1)).isEqualTo(losses.get(0)); // nothing was trained, as in PyTorch
        } finally {
            System.setErr(original);
        }
        String logged = captured.toString(StandardCharsets.UTF_8);
        String warning = "WARN dev.ferry.distributed.optim.DistributedOptimizer - DistributedOptimizer.step: no"
                + " parameter on [worker1] had a gradient in distributed autograd context";
        assertThat(logged).contains(warning, "run the forward pass inside the context");
        assertThat(logged.split(java.util.regex.Pattern.quote(warning), -1)).hasSize(2); // once, not every step
    }

    @Test
    void aRemoteModuleTakesPyTorchsRemoteDeviceForms() {
        try (RemoteModule<Linear> byWorker = RemoteModule.create(worker0, "worker1/cpu", TrainingFunctions::hidden);
             RemoteModule<Linear> byRank = RemoteModule.create(worker0, "rank:2/cpu", TrainingFunctions::hidden);
             RemoteModule<Linear> byRankAlone = RemoteModule.create(worker0, "rank:1", TrainingFunctions::hidden)) {
            assertThat(byWorker.owner().name()).isEqualTo("worker1");
            assertThat(byRank.owner().name()).isEqualTo("worker2");
            assertThat(byRankAlone.owner().name()).isEqualTo("worker1");
        }
    }

    @Test
    void aRemoteDeviceOtherThanCpuOrWithoutAWorkerIsAClearError() {
        assertThatThrownBy(() -> RemoteModule.create(worker0, "worker1/cuda:0", TrainingFunctions::hidden))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("device 'cuda:0' of remote device 'worker1/cuda:0' is not available")
                .hasMessageContaining("CPU-only");
        assertThatThrownBy(() -> RemoteModule.create(worker0, "cpu", TrainingFunctions::hidden))
                .hasMessageContaining("names a device but no worker");
        assertThatThrownBy(() -> RemoteModule.create(worker0, "/cpu", TrainingFunctions::hidden))
                .hasMessageContaining("Could not parse remote_device: /cpu");
        assertThatThrownBy(() -> RemoteModule.create(worker0, "worker1/cpu/cpu", TrainingFunctions::hidden))
                .hasMessageContaining("Could not parse remote_device");
        assertThatThrownBy(() -> RemoteModule.create(worker0, "worker1/cpu2", TrainingFunctions::hidden))
                .hasMessageContaining("Invalid device string: 'cpu2'");
    }

    @Test
    void aFailingConstructorFailsCreate() {
        assertThatThrownBy(() -> RemoteModule.create(worker0, "worker2", TrainingFunctions::failing))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("no module today");
    }

    @Test
    void trainAndEvalChangeTheRemoteModule() {
        try (RemoteModule<Module> probe = RemoteModule.create(worker0, "worker2", TrainingFunctions::modeProbe)) {
            Tensor ones = Tensors.ones(2);
            assertThat(probe.isTraining()).isTrue();
            assertThat(probe.eval().isTraining()).isFalse();
            assertThat(probe.forward(ones).equal(Tensors.zeros(2))).isTrue();
            assertThat(probe.train().forward(ones).equal(ones)).isTrue();
        }
    }

    @Test
    void aModelSplitOverTwoWorkersTakesTheStepItWouldTakeLocally() {
        Linear hiddenHere = TrainingFunctions.hidden();
        Linear outputHere = TrainingFunctions.output();
        Tensor x = Tensors.rand(new Generator(7), 6, 3);
        Tensor y = Tensors.rand(new Generator(8), 6, 1);
        Functional.mseLoss(outputHere.forward(hiddenHere.forward(x).relu()), y).backward();
        List<Tensor> localParams = new ArrayList<>(hiddenHere.parameters());
        localParams.addAll(outputHere.parameters());
        new SGD(localParams, 0.1).step();

        try (RemoteModule<Linear> hidden = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden);
             RemoteModule<Linear> output = RemoteModule.create(worker0, "worker2", TrainingFunctions::output)) {
            List<RRef<Tensor>> params = parametersOf(hidden, output);
            try (DistributedOptimizer optimizer = new DistributedOptimizer(worker0, p -> new SGD(p, 0.1), params);
                 DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThat(optimizer.owners()).extracting(w -> w.name()).containsExactly("worker1", "worker2");
                Tensor loss = Functional.mseLoss(output.forward(hidden.forward(x).relu()), y);

                context.backward(List.of(loss));
                optimizer.step(context.id());
            }
            for (int i = 0; i < params.size(); i++) {
                assertThat(params.get(i).toHere().allclose(localParams.get(i), 1e-5, 1e-6)).as("parameter %d", i).isTrue();
            }
        }
    }

    @Test
    void parametersOwnedByTheCallerItselfAreOptimizedToo() {
        Tensor mine = Tensors.ones(3).requiresGrad_(true);
        try (RRef<Tensor> mineRef = worker0.rref(mine);
             RemoteModule<Linear> hidden = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden)) {
            List<RRef<Tensor>> params = new ArrayList<>(List.of(mineRef));
            params.addAll(hidden.remoteParameters());
            try (DistributedOptimizer optimizer = new DistributedOptimizer(worker0, p -> new SGD(p, 0.5), params);
                 DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThat(optimizer.owners()).extracting(w -> w.name()).containsExactly("worker0", "worker1");
                Tensor loss = hidden.forward(mine.view(1, 3)).sum().add(mine.sum());

                context.backward(List.of(loss));
                optimizer.step(context.id());
            }
            // d(loss)/d(mine) = 1 + the column sums of the hidden layer's weight
            Tensor weight = TrainingFunctions.hidden().weight().detach();
            Tensor expected = Tensors.ones(3).sub(weight.sum(0).add(1).mul(0.5));
            assertThat(mine.allclose(expected, 1e-5, 1e-6)).isTrue();
        }
    }

    @Test
    void trainingARemoteModelLowersItsLoss() {
        try (RemoteModule<Linear> hidden = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden);
             RemoteModule<Linear> output = RemoteModule.create(worker0, "worker2", TrainingFunctions::output)) {
            List<RRef<Tensor>> params = parametersOf(hidden, output);
            Tensor x = Tensors.rand(new Generator(3), 32, 3);
            Tensor y = x.sum(1).view(32, 1);
            double first = Double.NaN;
            double last = Double.NaN;
            try (DistributedOptimizer optimizer = new DistributedOptimizer(worker0, p -> new SGD(p, 0.05), params)) {
                for (int step = 0; step < 30; step++) {
                    try (DistAutogradContext context = DistAutograd.context(worker0)) {
                        Tensor loss = Functional.mseLoss(output.forward(hidden.forward(x).relu()), y);
                        context.backward(List.of(loss));
                        optimizer.step(context.id());
                        last = loss.item();
                        first = step == 0 ? last : first;
                    }
                }
            }
            assertThat(last).isLessThan(first / 4);
        }
    }

    @Test
    void aFactoryFailingOnOneOwnerLeavesNoOptimizerOnTheOthers() {
        try (RemoteModule<Linear> hidden = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden);
             RemoteModule<Linear> output = RemoteModule.create(worker0, "worker2", TrainingFunctions::output)) {
            List<RRef<Tensor>> params = parametersOf(hidden, output);
            String before = ownedOn(1);

            // worker2's parameters (the output layer's weight is [1, 4]) make its factory throw
            assertThatThrownBy(() -> new DistributedOptimizer(worker0, p -> {
                if (p.get(0).size(0) == 1) {
                    throw new IllegalStateException("Error creating optimizer.");
                }
                return new SGD(p, 0.1);
            }, params)).isInstanceOf(RpcException.class).hasMessageContaining("Error creating optimizer.");

            // the optimizer already built on worker1 is released, not left for the garbage collector
            await().atMost(Duration.ofSeconds(10)).until(() -> ownedOn(1).equals(before));
            params.forEach(RRef::close);
        }
    }

    private static List<RRef<Tensor>> parametersOf(RemoteModule<?>... modules) {
        List<RRef<Tensor>> params = new ArrayList<>();
        for (RemoteModule<?> module : modules) {
            params.addAll(module.remoteParameters());
        }
        return params;
    }

    private static String ownedOn(int worker) {
        return cluster.agent(worker).getDebugInfo().get("rref.num_owner_rrefs");
    }

    @Test
    void aFailingFactoryFailsTheConstructor() {
        try (RemoteModule<Linear> hidden = RemoteModule.create(worker0, "worker1", TrainingFunctions::hidden)) {
            List<RRef<Tensor>> params = hidden.remoteParameters();
            assertThatThrownBy(() -> new DistributedOptimizer(worker0, p -> new SGD(p, -1), params))
                    .isInstanceOf(RpcException.class)
                    .hasMessageContaining("learning rate");
            assertThatThrownBy(() -> new DistributedOptimizer(worker0, p -> new SGD(p, 0.1), List.of()))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
