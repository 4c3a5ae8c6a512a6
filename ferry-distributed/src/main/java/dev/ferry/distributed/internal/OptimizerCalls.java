package dev.ferry.distributed.internal;

import dev.ferry.distributed.autograd.DistAutograd;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.Rpc;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.optim.Optimizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What {@code DistributedOptimizer} runs on the workers that own parameters. */
public final class OptimizerCalls {
    /**
     * Serializes the steps of every local optimizer of this process, as PyTorch's
     * {@code _LocalOptimizer.global_lock} does: two trainers' {@code DistributedOptimizer}s hold two
     * local optimizers over the same parameters on their owner, and their updates must not interleave.
     * Per process, not per agent: a process is one worker outside tests.
     */
    private static final Object STEPS = new Object();

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

    /**
     * One step of the local optimizer with this worker's gradients of context {@code contextId};
     * answers whether any of its parameters had one (none anywhere means the step changed nothing).
     */
    public static Boolean step(Optimizer optimizer, long contextId) {
        Map<Tensor, Tensor> gradients = DistAutograd.getGradients(Rpc.current(), contextId);
        synchronized (STEPS) {
            optimizer.step(gradients);
        }
        return optimizer.parameters().stream().anyMatch(gradients::containsKey);
    }
}
