package dev.ferry.distributed.internal.pipeline;

import dev.ferry.distributed.internal.ContextState;
import dev.ferry.distributed.internal.PerAgent;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Module;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * One agent's part of the pipeline steps going on: the stage runs it hosts (by step and stage) and,
 * on a driver, the steps' loss runs; and the one place that decides how a message reaches the worker
 * of another stage: a direct call when that worker is this one, a call over RPC otherwise. A message
 * for a step that is not (or no longer) here is dropped: it belongs to a step that failed.
 *
 * <p>Thread-safe.
 */
public final class StageHost {
    private static final Logger log = LoggerFactory.getLogger(StageHost.class);
    private static final PerAgent<StageHost> BY_AGENT = new PerAgent<>(StageHost::new);

    private record Key(long step, int stage) {
    }

    private final String self;
    private final PerAgent.AgentRef agent;
    private final Map<Key, StageRun> stages = new ConcurrentHashMap<>();
    private final Map<Long, LossRun> losses = new ConcurrentHashMap<>();

    private StageHost(RpcAgent agent) {
        this.self = agent.getWorkerInfo().name();
        this.agent = new PerAgent.AgentRef(agent);
    }

    /** The host of {@code agent}, made on first use. */
    public static StageHost of(RpcAgent agent) {
        return BY_AGENT.of(agent);
    }

    /** Starts this worker's run of {@code plan}'s stage with {@code module}, in {@code context}. */
    public void begin(Module module, StagePlan plan, ContextState context) {
        Key key = new Key(plan.step(), plan.stage());
        StageRun run = new StageRun(plan, module, context, this);
        if (stages.putIfAbsent(key, run) != null) {
            throw new IllegalStateException("stage " + plan.stage() + " of step " + plan.step() + " began twice");
        }
        // A driver that dies mid-step never ends its runs: its context's release does.
        context.whenReleased(() -> abort(plan.step()));
    }

    /** The end of a stage run: its peak of held micro-batches, or its failure; forgotten once over. */
    public RpcFuture<Integer> finish(long step, int stage) {
        StageRun run = stages.get(new Key(step, stage));
        if (run == null) {
            return RpcFuture.failed(new IllegalStateException("stage " + stage + " of step " + step
                    + " is not running on " + self));
        }
        run.done().addDoneCallback(done -> stages.remove(new Key(step, stage), run));
        return run.done();
    }

    /** Registers the driver's loss run of a step. */
    public void beginLoss(LossRun run) {
        losses.put(run.step(), run);
    }

    /** Ends every run of {@code step} here (a stage failed, or the driver gave up). */
    public void abort(long step) {
        // CANCELLED, as a cancelled call: the step already failed for a reason told to the driver
        // (or the driver is gone), and each stage's worker logging its part as failing would blame it
        RpcException aborted = new RpcException(RpcException.Code.CANCELLED, "pipeline step " + step + " was aborted");
        stages.entrySet().removeIf(entry -> {
            if (entry.getKey().step() != step) {
                return false;
            }
            entry.getValue().fail(aborted);
            return true;
        });
        LossRun loss = losses.remove(step);
        if (loss != null) {
            loss.fail(aborted);
        }
    }

    /** Forgets the driver's loss run of {@code step} (the step is over). */
    public void forgetLoss(long step) {
        losses.remove(step);
    }

    /** How many stage runs and loss runs this worker holds now (for tests and debug info). */
    public int runs() {
        return stages.size() + losses.size();
    }

    // ---------------------------------------------------------------- arrivals

    public void input(long step, int stage, int microBatch, Tensor x) {
        StageRun run = stages.get(new Key(step, stage));
        if (run == null) {
            log.debug("{}: dropping an input of step {} stage {}: not running here", self, step, stage);
            return;
        }
        run.input(microBatch, x);
    }

    public void outputGradient(long step, int stage, int microBatch, Tensor dy) {
        StageRun run = stages.get(new Key(step, stage));
        if (run == null) {
            log.debug("{}: dropping a gradient of step {} stage {}: not running here", self, step, stage);
            return;
        }
        run.gradient(microBatch, dy);
    }

    public void output(long step, int microBatch, Tensor y) {
        LossRun run = losses.get(step);
        if (run == null) {
            log.debug("{}: dropping an output of step {}: no loss run here", self, step);
            return;
        }
        run.output(microBatch, y);
    }

    // ---------------------------------------------------------------- departures

    /** Stage {@code plan.stage()}'s output of a micro-batch: to the next stage, or to the driver after the last. */
    void sendOutput(StagePlan plan, int microBatch, Tensor y, Consumer<Throwable> onFailure) {
        long step = plan.step();
        if (plan.last()) {
            send(plan.next(), onFailure, host -> host.output(step, microBatch, y),
                    agent -> agent.rpcAsync(plan.next(), PipelineCalls::output, step, microBatch, y));
        } else {
            int next = plan.stage() + 1;
            send(plan.next(), onFailure, host -> host.input(step, next, microBatch, y),
                    agent -> agent.rpcAsync(plan.next(), PipelineCalls::input, step, next, microBatch, y));
        }
    }

    /** The gradient of stage {@code plan.stage()}'s input, to the stage before it. */
    void sendInputGradient(StagePlan plan, int microBatch, Tensor dx, Consumer<Throwable> onFailure) {
        long step = plan.step();
        int previous = plan.stage() - 1;
        send(plan.previous(), onFailure, host -> host.outputGradient(step, previous, microBatch, dx),
                agent -> agent.rpcAsync(plan.previous(), PipelineCalls::outputGradient, step, previous, microBatch, dx));
    }

    /** The gradient of the loss with respect to the last stage's output, from the driver to that stage. */
    void sendOutputGradient(long step, int stage, String worker, int microBatch, Tensor dy,
                            Consumer<Throwable> onFailure) {
        send(worker, onFailure, host -> host.outputGradient(step, stage, microBatch, dy),
                agent -> agent.rpcAsync(worker, PipelineCalls::outputGradient, step, stage, microBatch, dy));
    }

    private void send(String worker, Consumer<Throwable> onFailure, Consumer<StageHost> here,
                      java.util.function.Function<RpcAgent, RpcFuture<Boolean>> remote) {
        if (worker.equals(self)) {
            here.accept(this);
            return;
        }
        try {
            remote.apply(agent.get()).addDoneCallback(sent -> {
                if (sent.failed()) {
                    onFailure.accept(sent.exceptionNow());
                }
            });
        } catch (RuntimeException e) {
            onFailure.accept(e);
        }
    }
}
