package dev.ferry.distributed.internal;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.optim.Optimizer;

import java.util.ArrayList;
import java.util.List;

/** What {@code DistributedOptimizer} runs on the workers that own parameters. */
public final class OptimizerCalls {
    private OptimizerCalls() {
    }

    /** The values of RRefs this worker owns (the parameters a local optimizer will update in place). */
    public static List<Tensor> localValues(List<RRef<Tensor>> owned) {
        List<Tensor> values = new ArrayList<>(owned.size());
        for (RRef<Tensor> rref : owned) {
            values.add(rref.localValue());
        }
        return values;
    }

    /** Answers once the optimizer exists on its owner (so that a failing factory surfaces at construction). */
    public static Boolean ready(Optimizer optimizer) {
        return Boolean.TRUE;
    }

    /** One step of the local optimizer with this worker's gradients of context {@code contextId}. */
    public static Boolean step(Optimizer optimizer, long contextId) {
        optimizer.step(DistAutograd.getGradients(Rpc.current(), contextId));
        return Boolean.TRUE;
    }
}
