package dev.ferry.distributed.internal.pipeline;

import dev.ferry.distributed.internal.ContextState;
import dev.ferry.distributed.internal.CurrentContext;
import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.nn.Module;

/**
 * What pipeline steps run on the workers of their stages and on their driver: the public static
 * methods are the calls between them, each handed to this worker's {@link StageHost}.
 */
public final class PipelineCalls {
    private PipelineCalls() {
    }

    /** On a stage's worker, called on the stage module's RRef inside the step's autograd context. */
    public static Boolean begin(Module module, StagePlan plan) {
        ContextState context = CurrentContext.get();
        if (context == null) {
            throw new IllegalStateException("a pipeline step begins inside a distributed autograd context");
        }
        StageHost.of(Rpc.current()).begin(module, plan, context);
        return Boolean.TRUE;
    }

    /** Answers when the stage's run ends: with its peak of held micro-batches, or its failure. */
    @AsyncExecution
    public static RpcFuture<Integer> finish(long step, int stage) {
        return StageHost.of(Rpc.current()).finish(step, stage);
    }

    public static Boolean abort(long step) {
        StageHost.of(Rpc.current()).abort(step);
        return Boolean.TRUE;
    }

    /** A micro-batch's input for stage {@code stage}: from the driver, or the stage before. */
    public static Boolean input(long step, int stage, int microBatch, Tensor x) {
        StageHost.of(Rpc.current()).input(step, stage, microBatch, x);
        return Boolean.TRUE;
    }

    /** The gradient of stage {@code stage}'s output of a micro-batch: from the stage after it, or the driver. */
    public static Boolean outputGradient(long step, int stage, int microBatch, Tensor dy) {
        StageHost.of(Rpc.current()).outputGradient(step, stage, microBatch, dy);
        return Boolean.TRUE;
    }

    /** On the driver: the last stage's output of a micro-batch. */
    public static Boolean output(long step, int microBatch, Tensor y) {
        StageHost.of(Rpc.current()).output(step, microBatch, y);
        return Boolean.TRUE;
    }
}
