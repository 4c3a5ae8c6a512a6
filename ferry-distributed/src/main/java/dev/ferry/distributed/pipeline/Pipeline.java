package dev.ferry.distributed.pipeline;

import dev.ferry.distributed.internal.ContextState;
import dev.ferry.distributed.internal.CurrentContext;
import dev.ferry.distributed.internal.pipeline.LossRun;
import dev.ferry.distributed.internal.pipeline.PipelineCalls;
import dev.ferry.distributed.internal.pipeline.ScheduleOrder;
import dev.ferry.distributed.internal.pipeline.StageHost;
import dev.ferry.distributed.internal.pipeline.StagePlan;
import dev.ferry.distributed.nn.RemoteModule;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Module;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BinaryOperator;

/**
 * Pipeline parallelism with a schedule: a model cut into an ordered list of stages, each a
 * {@link RemoteModule} (run on its worker) or a local {@link Module} (run on this worker, the
 * driver), trained on micro-batches. {@link #step} splits a batch into micro-batches and runs each
 * one's forward pass through the stages and its backward pass back through them, in the order the
 * {@link Schedule} gives every stage ({@link Schedule#GPIPE}, {@link Schedule#ONE_F_ONE_B}), inside
 * the caller's distributed autograd context: each stage's parameter gradients land in its worker's
 * part of the context, summed over the micro-batches, exactly those of one backward pass over the
 * whole batch; the optimizer step stays yours ({@link dev.ferry.distributed.optim.DistributedOptimizer}).
 *
 * <pre>{@code
 * Pipeline pipeline = Pipeline.builder()
 *         .stage(RemoteModule.create("worker1", Model::firstHalf))
 *         .stage(RemoteModule.create("worker2", Model::secondHalf))
 *         .microBatches(4)
 *         .schedule(Schedule.ONE_F_ONE_B)
 *         .loss(Functional::crossEntropy)
 *         .build();
 * DistributedOptimizer optimizer = new DistributedOptimizer(p -> new SGD(p, 0.05), pipeline.parameterRRefs());
 * try (DistAutogradContext context = DistAutograd.context()) {
 *     Pipeline.StepResult result = pipeline.step(x, y);    // result.loss(): the batch's loss
 *     optimizer.step(context.id());
 * }
 * }</pre>
 *
 * <p><b>How a step runs.</b> Activations and gradients go straight from stage to stage, never
 * through the driver; only the last stage's outputs come to the driver, which computes each
 * micro-batch's loss as it arrives and sends its gradient back at once. Each stage runs its actions
 * in its schedule's order as their inputs arrive, on the threads that bring them: no thread waits.
 *
 * <pre>
 *  driver            stage 0 (worker1)           stage 1 (worker2)
 *  x[m] ──────────▶  F0(m) ──── activation ────▶ F1(m) ──── output ────▶ driver: loss[m]
 *                    B0(m) ◀─── gradient ─────── B1(m) ◀─── gradient ────┘
 * </pre>
 *
 * <p><b>The loss.</b> {@code loss} is applied to each micro-batch's output and targets and must
 * return a scalar computed from that output (one that does not require grad fails the step); the step's loss is their mean weighted by micro-batch size, which is the whole
 * batch's loss for the usual mean-reduced losses ({@code crossEntropy}, {@code mseLoss}), and its
 * gradients those of the whole batch. It runs on the driver, on an agent thread, one micro-batch at
 * a time. A batch of {@code n} rows is split into {@code microBatches} parts of {@code n / microBatches}
 * rows (the first {@code n % microBatches} one more) along dimension 0, inputs and targets alike.
 *
 * <p><b>Failures.</b> A stage that throws in its forward or backward pass, a stage whose worker goes
 * away or does not answer within the agent's RPC timeout, or a loss that throws fails the step with
 * a {@link PipelineException} naming that stage and carrying its error, as soon as the driver hears
 * of it; the other stages' parts of the step are stopped and dropped, and the next step starts
 * afresh. Gradients the failed step already put into the context stay there: use a new context for
 * the next step, as the loop above does.
 *
 * <p>A stage module should not change state its other micro-batches' backward passes read (modules
 * built of the usual layers do not). One step at a time per pipeline: {@link #step} is synchronized.
 * Stages may share workers, and may live on the driver.
 */
public final class Pipeline {
    private static final AtomicLong NEXT_STEP = new AtomicLong();

    private final RpcAgent agent;
    private final List<Stage> stages;
    private final int microBatches;
    private final Schedule schedule;
    private final BinaryOperator<Tensor> loss;

    private Pipeline(RpcAgent agent, List<Stage> stages, int microBatches, Schedule schedule,
                     BinaryOperator<Tensor> loss) {
        this.agent = agent;
        this.stages = List.copyOf(stages);
        this.microBatches = microBatches;
        this.schedule = schedule;
        this.loss = loss;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The result of one step: the batch's loss, and how many micro-batches each stage held at most. */
    public record StepResult(double loss, List<Integer> peakActivations) {
        public StepResult {
            peakActivations = List.copyOf(peakActivations);
        }
    }

    /** A stage: where it runs, and how its part of a step begins there. */
    private sealed interface Stage permits RemoteStage, LocalStage {
        String worker();

        RpcFuture<Boolean> begin(StagePlan plan, ContextState context);

        List<RRef<Tensor>> parameterRRefs();
    }

    private record RemoteStage(RemoteModule<?> module) implements Stage {
        @Override
        public String worker() {
            return module.owner().name();
        }

        @Override
        public RpcFuture<Boolean> begin(StagePlan plan, ContextState context) {
            return module.moduleRRef().rpcAsync(PipelineCalls::begin, plan); // carries the caller's context
        }

        @Override
        public List<RRef<Tensor>> parameterRRefs() {
            return module.remoteParameters();
        }
    }

    private record LocalStage(Module module, RpcAgent agent) implements Stage {
        @Override
        public String worker() {
            return agent.getWorkerInfo().name();
        }

        @Override
        public RpcFuture<Boolean> begin(StagePlan plan, ContextState context) {
            StageHost.of(agent).begin(module, plan, context);
            return RpcFuture.completed(Boolean.TRUE);
        }

        @Override
        public List<RRef<Tensor>> parameterRRefs() {
            return module.parameters().stream().map(agent::rref).toList();
        }
    }

    public int stages() {
        return stages.size();
    }

    public int microBatches() {
        return microBatches;
    }

    public Schedule schedule() {
        return schedule;
    }

    /** RRefs to every stage's parameters where they live, in stage order: for a {@code DistributedOptimizer}. */
    public List<RRef<Tensor>> parameterRRefs() {
        List<RRef<Tensor>> params = new ArrayList<>();
        stages.forEach(stage -> params.addAll(stage.parameterRRefs()));
        return params;
    }

    /**
     * One forward and backward pass of the batch ({@code input}, {@code target}) through the
     * stages, micro-batch by micro-batch as the schedule says, inside this thread's distributed
     * autograd context; returns when every stage is done.
     *
     * @throws IllegalStateException    outside a distributed autograd context
     * @throws IllegalArgumentException if input and target differ in rows, or the batch has fewer
     *                                  rows than micro-batches
     * @throws PipelineException        if a stage or the loss failed
     */
    public synchronized StepResult step(Tensor input, Tensor target) {
        ContextState context = CurrentContext.get();
        if (context == null || context.container().agent() != agent) {
            throw new IllegalStateException("Pipeline.step runs inside a distributed autograd context of its agent:"
                    + " try (DistAutogradContext context = DistAutograd.context()) { pipeline.step(x, y); ... }");
        }
        int rows = input.dim() == 0 ? 0 : input.size(0);
        if (target.dim() == 0 || target.size(0) != rows) {
            throw new IllegalArgumentException("input and target must have the same number of rows, got "
                    + java.util.Arrays.toString(input.shape()) + " and " + java.util.Arrays.toString(target.shape()));
        }
        if (rows < microBatches) {
            throw new IllegalArgumentException("a batch of " + rows + " rows cannot make " + microBatches
                    + " micro-batches");
        }
        long step = ((long) agent.getWorkerInfo().id() << 48) | (NEXT_STEP.getAndIncrement() & ((1L << 48) - 1));
        StageHost host = StageHost.of(agent);
        List<Tensor> inputs = new ArrayList<>(microBatches);
        List<Tensor> targets = new ArrayList<>(microBatches);
        double[] weights = new double[microBatches];
        for (int m = 0, start = 0; m < microBatches; m++) {
            int size = rows / microBatches + (m < rows % microBatches ? 1 : 0);
            inputs.add(input.narrow(0, start, size));
            targets.add(target.narrow(0, start, size));
            weights[m] = (double) size / rows;
            start += size;
        }
        int last = stages.size() - 1;
        LossRun lossRun = new LossRun(step, last, stages.get(last).worker(), loss, targets, weights, context, host);
        host.beginLoss(lossRun);
        Watch watch = new Watch();
        try {
            List<RpcFuture<Boolean>> begun = new ArrayList<>();
            for (int s = 0; s <= last; s++) {
                StagePlan plan = new StagePlan(step, s, stages.size(), ScheduleOrder.of(schedule, s, stages.size(),
                        microBatches), s == 0 ? null : stages.get(s - 1).worker(),
                        s == last ? agent.getWorkerInfo().name() : stages.get(s + 1).worker());
                begun.add(watch.on(s, stages.get(s).begin(plan, context)));
            }
            watch.await(begun, agent.getRpcTimeout());
            List<RpcFuture<Integer>> finished = new ArrayList<>();
            for (int s = 0; s <= last; s++) {
                finished.add(watch.on(s, finish(step, s)));
            }
            RpcFuture<Double> lossDone = watch.on(PipelineException.LOSS, lossRun.done());
            String first = stages.get(0).worker();
            for (int m = 0; m < microBatches; m++) {
                sendInput(host, first, step, m, inputs.get(m), watch);
            }
            List<RpcFuture<?>> all = new ArrayList<>(finished);
            all.add(lossDone);
            watch.await(all, agent.getRpcTimeout());
            List<Integer> peaks = finished.stream().map(RpcFuture::value).toList();
            return new StepResult(lossDone.value(), peaks);
        } catch (RuntimeException | Error e) {
            abort(step, host);
            throw e;
        } finally {
            host.forgetLoss(step);
        }
    }

    private RpcFuture<Integer> finish(long step, int stage) {
        String worker = stages.get(stage).worker();
        if (worker.equals(agent.getWorkerInfo().name())) {
            return StageHost.of(agent).finish(step, stage);
        }
        // an asynchronous function's answer arrives as its (completed) future
        return agent.rpcAsync(worker, PipelineCalls::finish, step, stage).thenCompose(answer -> answer);
    }

    private void sendInput(StageHost host, String worker, long step, int microBatch, Tensor x, Watch watch) {
        if (worker.equals(agent.getWorkerInfo().name())) {
            host.input(step, 0, microBatch, x);
        } else {
            watch.on(0, agent.rpcAsync(worker, PipelineCalls::input, step, 0, microBatch, x));
        }
    }

    /** Stops the step's runs everywhere (fire and forget: a worker that is gone has nothing left to stop). */
    private void abort(long step, StageHost host) {
        Set<String> workers = new LinkedHashSet<>();
        stages.forEach(stage -> workers.add(stage.worker()));
        for (String worker : workers) {
            if (worker.equals(agent.getWorkerInfo().name())) {
                host.abort(step);
            } else {
                try {
                    agent.rpcAsync(worker, PipelineCalls::abort, step);
                } catch (RuntimeException e) {
                    // the worker or this agent is going away: nothing to stop there
                }
            }
        }
    }

    /** The futures of one step: the first to fail fails the step, naming its stage. */
    private final class Watch {
        private final AtomicReference<PipelineException> failure = new AtomicReference<>();
        private final CompletableFuture<Void> failed = new CompletableFuture<>();

        <T> RpcFuture<T> on(int stage, RpcFuture<T> future) {
            future.addDoneCallback(done -> {
                if (done.failed() && failure.compareAndSet(null, describe(stage, done.exceptionNow()))) {
                    failed.complete(null);
                }
            });
            return future;
        }

        /** Waits until all of {@code futures} are done, or one watched future failed: then throws its failure. */
        void await(List<? extends RpcFuture<?>> futures, Duration timeout) {
            CompletableFuture<?>[] each = futures.stream().map(RpcFuture::toCompletableFuture)
                    .toArray(CompletableFuture[]::new);
            CompletableFuture<Object> over = CompletableFuture.anyOf(CompletableFuture.allOf(each)
                    .exceptionally(e -> null), failed);
            try {
                RpcFuture.fromCompletionStage(over).await(timeout);
            } catch (RpcException e) {
                if (e.code() == RpcException.Code.TIMEOUT) {
                    throw new PipelineException("the pipeline step did not finish within " + timeout.toMillis()
                            + " ms (the agent's RPC timeout)", PipelineException.LOSS, e);
                }
                throw e;
            }
            PipelineException first = failure.get();
            if (first != null) {
                throw first;
            }
        }
    }

    private PipelineException describe(int stage, Throwable error) {
        String detail = error instanceof RpcException r && r.remoteMessage() != null ? r.remoteMessage()
                : String.valueOf(error.getMessage());
        if (stage == PipelineException.LOSS) {
            return new PipelineException("pipeline step failed on the driver: " + detail, stage, error);
        }
        return new PipelineException("pipeline stage " + stage + " (on " + stages.get(stage).worker() + ") failed: "
                + detail, stage, error);
    }

    /** Builds a {@link Pipeline}; stages in order, a loss function and a micro-batch count are needed. */
    public static final class Builder {
        private RpcAgent agent;
        /** Each a {@link RemoteModule} or a local {@link Module}, in order. */
        private final List<Object> parts = new ArrayList<>();
        private int microBatches = 1;
        private Schedule schedule = Schedule.ONE_F_ONE_B;
        private BinaryOperator<Tensor> loss;

        private Builder() {
        }

        /** The driver's agent (default: {@link Rpc#current()} when built). */
        public Builder agent(RpcAgent agent) {
            this.agent = Objects.requireNonNull(agent, "agent");
            return this;
        }

        /** Appends a stage that runs on the worker owning {@code module}. */
        public Builder stage(RemoteModule<?> module) {
            parts.add(Objects.requireNonNull(module, "module"));
            return this;
        }

        /** Appends a stage that runs here, on the driver. */
        public Builder stage(Module module) {
            parts.add(Objects.requireNonNull(module, "module"));
            return this;
        }

        /** How many micro-batches each batch is split into (default 1: no pipelining). */
        public Builder microBatches(int microBatches) {
            if (microBatches < 1) {
                throw new IllegalArgumentException("microBatches must be at least 1, got " + microBatches);
            }
            this.microBatches = microBatches;
            return this;
        }

        /** The order of forward and backward passes on each stage (default {@link Schedule#ONE_F_ONE_B}). */
        public Builder schedule(Schedule schedule) {
            this.schedule = Objects.requireNonNull(schedule, "schedule");
            return this;
        }

        /** The loss of a micro-batch from the last stage's output and its targets: a scalar. */
        public Builder loss(BinaryOperator<Tensor> loss) {
            this.loss = Objects.requireNonNull(loss, "loss");
            return this;
        }

        public Pipeline build() {
            if (parts.isEmpty()) {
                throw new IllegalStateException("a pipeline needs at least one stage");
            }
            if (loss == null) {
                throw new IllegalStateException("a pipeline needs a loss function: builder.loss(Functional::crossEntropy)");
            }
            RpcAgent driver = agent != null ? agent : Rpc.current();
            List<Stage> stages = parts.stream().map(part -> part instanceof RemoteModule<?> remote
                    ? (Stage) new RemoteStage(remote) : new LocalStage((Module) part, driver)).toList();
            return new Pipeline(driver, stages, microBatches, schedule, loss);
        }
    }
}
