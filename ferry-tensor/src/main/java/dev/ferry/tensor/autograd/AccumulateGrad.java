package dev.ferry.tensor.autograd;

import dev.ferry.tensor.Tensor;

/**
 * The node at the end of every path: it stands for a leaf tensor that requires grad. The engine
 * does not call {@link #apply}; it hands the gradient that reaches this node to the backward
 * pass's {@link GradientSink}.
 */
public final class AccumulateGrad extends Node {
    private final Tensor variable;

    /** Use {@link Tensor#gradientEdge()}: a leaf has exactly one accumulator. */
    public AccumulateGrad(Tensor variable) {
        super("AccumulateGrad", new Edge[0], null);
        this.variable = variable;
    }

    /** The leaf tensor this node accumulates into. */
    public Tensor variable() {
        return variable;
    }

    @Override
    protected Tensor[] apply(Tensor[] gradOutputs) {
        throw new IllegalStateException("AccumulateGrad is handled by the engine");
    }
}
