package dev.ferry.distributed.pipeline;

import dev.ferry.distributed.ThreeWorkers;
import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.distributed.autograd.DistAutogradContext;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction0;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.RequestTimeline;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.nn.Functional;
import dev.ferry.tensor.nn.Module;
import dev.ferry.tensor.nn.Sequential;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A {@link Pipeline} over three workers on loopback: its gradients are those of the same model
 * trained in one process on the whole batch, for both schedules, two and three stages (remote, on
 * the driver, two on one worker) and several micro-batch counts; 1F1B holds at most as many
 * micro-batches per stage as there are stages; a failing stage fails the step promptly, and the
 * next step works.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PipelineTest extends ThreeWorkers {
    private static final int ROWS = 10;
    private final List<RemoteModule<?>> remotes = new ArrayList<>();
    /** The modules of the stages the last {@link #pipeline} runs on the driver, by stage. */
    private final java.util.Map<Integer, Module> locals = new java.util.HashMap<>();

    @AfterEach
    void closeRemotes() {
        remotes.forEach(RemoteModule::close);
        remotes.clear();
    }

    /** Where each stage of a cut runs: a worker's name, or "local" for the driver (worker0). */
    private record Cut(String name, List<String> places, List<RpcFunction0<Module>> stages) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final Cut TWO = new Cut("2 stages on worker1, worker2", List.of("worker1", "worker2"),
            List.of(PipelineFunctions::stage0, PipelineFunctions::stage1And2));
    private static final Cut THREE_WITH_LOCAL = new Cut("3 stages on worker1, the driver, worker2",
            List.of("worker1", "local", "worker2"),
            List.of(PipelineFunctions::stage0, PipelineFunctions::stage1, PipelineFunctions::stage2));
    private static final Cut THREE_SHARING = new Cut("3 stages on worker1, worker1, worker2",
            List.of("worker1", "worker1", "worker2"),
            List.of(PipelineFunctions::stage0, PipelineFunctions::stage1, PipelineFunctions::stage2));

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Schedule schedule : Schedule.values()) {
            for (Cut cut : List.of(TWO, THREE_WITH_LOCAL, THREE_SHARING)) {
                for (int microBatches : new int[] {1, 3, 4}) {
                    cases.add(Arguments.of(schedule, cut, microBatches));
                }
            }
        }
        return cases.stream();
    }

    private Pipeline pipeline(Cut cut, Schedule schedule, int microBatches, java.util.function.BinaryOperator<Tensor> loss)
            throws Exception {
        Pipeline.Builder builder = Pipeline.builder().agent(worker0).schedule(schedule).microBatches(microBatches)
                .loss(loss);
        for (int s = 0; s < cut.places().size(); s++) {
            String place = cut.places().get(s);
            if (place.equals("local")) {
                Module local = cut.stages().get(s).call();
                locals.put(s, local);
                builder.stage(local);
            } else {
                RemoteModule<Module> remote = RemoteModule.create(worker0, place, cut.stages().get(s));
                remotes.add(remote);
                builder.stage(remote);
            }
        }
        return builder.build();
    }

    @ParameterizedTest(name = "{0}, {1}, {2} micro-batches")
    @MethodSource("cases")
    void gradientsAreThoseOfTheWholeBatchInOneProcess(Schedule schedule, Cut cut, int microBatches) throws Exception {
        Tensor x = PipelineFunctions.rows(ROWS, 1);
        Tensor y = Tensors.randint(0, 2, new Generator(2), ROWS);
        Sequential reference = new Sequential(PipelineFunctions.stage0(), PipelineFunctions.stage1(),
                PipelineFunctions.stage2());
        Tensor expectedLoss = Functional.crossEntropy(reference.forward(x), y);
        expectedLoss.backward();

        Pipeline pipeline = pipeline(cut, schedule, microBatches, Functional::crossEntropy);
        List<Tensor> got = new ArrayList<>();
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            Pipeline.StepResult result = pipeline.step(x, y);
            assertThat(result.loss()).isCloseTo(expectedLoss.item(), org.assertj.core.api.Assertions.within(1e-5));
            int remote = 0;
            for (int s = 0; s < cut.places().size(); s++) {
                if (cut.places().get(s).equals("local")) {
                    Module local = locals.get(s);
                    java.util.Map<Tensor, Tensor> grads = DistAutograd.getGradients(worker0, context.id());
                    local.parameters().forEach(p -> got.add(grads.get(p)));
                } else {
                    got.addAll(remotes.get(remote++).moduleRRef().rpcSync(PipelineFunctions::gradients, context.id()));
                }
            }
        }
        List<Tensor> expected = reference.parameters().stream().map(Tensor::grad).toList();
        assertThat(got).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(got.get(i)).as("gradient %d", i).isNotNull();
            assertThat(got.get(i).allclose(expected.get(i), 1e-4, 1e-6)).as("gradient %d: %s vs %s", i, got.get(i),
                    expected.get(i)).isTrue();
        }
    }

    @Test
    void oneForwardOneBackwardHoldsAtMostAsManyMicroBatchesAsThereAreStages() throws Exception {
        Tensor x = PipelineFunctions.rows(16, 3);
        Tensor y = Tensors.randint(0, 2, new Generator(4), 16);
        for (Schedule schedule : Schedule.values()) {
            Pipeline pipeline = pipeline(THREE_WITH_LOCAL, schedule, 8, Functional::crossEntropy);
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                List<Integer> peaks = pipeline.step(x, y).peakActivations();
                if (schedule == Schedule.ONE_F_ONE_B) {
                    assertThat(peaks).containsExactly(3, 2, 1);
                } else {
                    assertThat(peaks).containsExactly(8, 8, 8);
                }
            }
        }
    }

    @Test
    void aStageFailingMidStepFailsTheStepPromptlyWithItsErrorAndTheNextStepWorks() {
        Pipeline pipeline = threeStagesAround(PipelineFunctions::nanGuard);
        Tensor x = PipelineFunctions.rows(8, 5);
        Tensor ones = Tensors.ones(8, 2);
        Tensor poisoned = x.clone();
        poisoned.select(0, 5).fill_(Double.NaN); // micro-batch 2 of 4

        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThatThrownBy(() -> pipeline.step(poisoned, ones)).isInstanceOfSatisfying(PipelineException.class,
                        e -> {
                            assertThat(e.stage()).isEqualTo(1);
                            assertThat(e).hasMessageContaining("pipeline stage 1 (on worker2) failed")
                                    .hasMessageContaining("forward pass of micro-batch 2")
                                    .hasMessageContaining("NaN in the input");
                            assertThat(e.getCause()).isInstanceOf(RpcException.class);
                        });
            }
            Tensor nanTargets = ones.clone();
            nanTargets.select(0, 0).fill_(Double.NaN); // a NaN gradient from the loss, into the guard's backward
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThatThrownBy(() -> pipeline.step(x, nanTargets)).isInstanceOfSatisfying(PipelineException.class,
                        e -> assertThat(e).hasMessageContaining("pipeline stage 1 (on worker2) failed")
                                .hasMessageContaining("backward pass of micro-batch 0")
                                .hasMessageContaining("NaN in the gradient"));
            }
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThatThrownBy(() -> pipeline.step(x, Tensors.ones(8, 3)))
                        .isInstanceOfSatisfying(PipelineException.class, e -> {
                            assertThat(e.stage()).isEqualTo(PipelineException.LOSS);
                            assertThat(e).hasMessageContaining("the loss of micro-batch 0 failed");
                        });
            }
            try (DistAutogradContext context = DistAutograd.context(worker0)) {
                assertThat(pipeline.step(x, ones).loss()).isFinite();
            }
        });
        assertThat(worker0.rpcSync("worker2", PipelineFunctions::runningStages)).isZero();
        assertThat(worker0.rpcSync("worker1", PipelineFunctions::runningStages)).isZero();
    }

    @Test
    void theStagesAStepFailingElsewhereStopsEndCancelledNotFailed() throws Exception {
        // the other stages' workers logged a WARN "failed running request (PipelineCalls::finish):
        // IllegalStateException: pipeline step N was aborted" for every step that failed anywhere
        Pipeline pipeline = threeStagesAround(PipelineFunctions::stage1);
        Queue<String> ends = new ConcurrentLinkedQueue<>();
        List<AutoCloseable> observers = new ArrayList<>();
        for (int worker = 1; worker <= 2; worker++) {
            observers.add(cluster.agent(worker).addCallObserver(new CallObserver() {
                @Override
                public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
                    return true;
                }

                @Override
                public void requestEnded(RequestTimeline request) {
                    if (request.info().function().contains("PipelineCalls::finish")) {
                        ends.add(request.info().callee().name() + " " + request.outcome());
                    }
                }
            }));
        }
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            assertThatThrownBy(() -> pipeline.step(PipelineFunctions.rows(8, 5), Tensors.ones(8, 3)))
                    .isInstanceOfSatisfying(PipelineException.class,
                            e -> assertThat(e.stage()).isEqualTo(PipelineException.LOSS));
            await().atMost(Duration.ofSeconds(10)).until(() -> ends.size() == 2);
            assertThat(ends).containsExactlyInAnyOrder("worker1 CANCELLED", "worker2 CANCELLED");
        } finally {
            for (AutoCloseable observer : observers) {
                observer.close();
            }
        }
    }

    /** Stage 0 on worker1, {@code middle} on worker2, stage 2 on the driver; four micro-batches, {@link #scaledSum}. */
    private Pipeline threeStagesAround(RpcFunction0<Module> middle) {
        RemoteModule<Module> first = RemoteModule.create(worker0, "worker1", PipelineFunctions::stage0);
        RemoteModule<Module> second = RemoteModule.create(worker0, "worker2", middle);
        remotes.add(first);
        remotes.add(second);
        return Pipeline.builder().agent(worker0).stage(first).stage(second)
                .stage(PipelineFunctions.stage2()).microBatches(4).loss(PipelineTest::scaledSum).build();
    }

    /** A loss that multiplies the output by the targets: NaN targets give NaN gradients. */
    private static Tensor scaledSum(Tensor output, Tensor target) {
        return output.mul(target).mean();
    }

    @Test
    void aLossThatDoesNotDependOnTheOutputFailsTheStepInsteadOfTrainingNothing() {
        // before, a detached loss gave every stage zero gradients and the step a loss, silently
        Pipeline pipeline = Pipeline.builder().agent(worker0).stage(PipelineFunctions.stage2()).microBatches(2)
                .loss((output, target) -> Functional.mseLoss(output, target).detach()).build();
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            assertThatThrownBy(() -> pipeline.step(PipelineFunctions.rows(8, 1), Tensors.zeros(8, 2)))
                    .isInstanceOf(PipelineException.class)
                    .hasMessageContaining("the loss of micro-batch 0 failed")
                    .hasMessageContaining("the loss does not require grad: compute it from the last stage's output");
        }
    }

    @Test
    void aStepNeedsAContextAndEnoughRows() {
        Pipeline pipeline = Pipeline.builder().agent(worker0).stage(PipelineFunctions.stage2()).microBatches(4)
                .loss(Functional::crossEntropy).build();
        assertThatThrownBy(() -> pipeline.step(PipelineFunctions.rows(8, 1), Tensors.zeros(8)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("distributed autograd context");
        try (DistAutogradContext context = DistAutograd.context(worker0)) {
            assertThatThrownBy(() -> pipeline.step(PipelineFunctions.rows(3, 1), Tensors.zeros(3)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot make 4 micro-batches");
        }
    }
}
