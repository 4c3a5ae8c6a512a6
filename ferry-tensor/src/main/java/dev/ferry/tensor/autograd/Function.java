package dev.ferry.tensor.autograd;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;

/**
 * A user-defined differentiable operation: {@link #forward} computes the result (not recorded),
 * {@link #backward} its vector-Jacobian product. {@link #apply} records the pair as one node.
 *
 * <pre>
 * class Cube extends Function {
 *     protected Tensor forward(FunctionContext ctx, Tensor... in) {
 *         ctx.saveForBackward(in[0]);
 *         return in[0].pow(3);
 *     }
 *     protected Tensor[] backward(FunctionContext ctx, Tensor grad) {
 *         Tensor x = ctx.savedTensors()[0];
 *         return new Tensor[] {grad.mul(x.square()).mul(3)};
 *     }
 * }
 * Tensor y = new Cube().apply(x);
 * </pre>
 *
 * <p>A {@code Function} instance holds no per-call state (use the context), so one instance may
 * be applied many times and from several threads.
 */
public abstract class Function {

    /** Computes the output. Runs with grad mode off. Do not modify the inputs in place. */
    protected abstract Tensor forward(FunctionContext ctx, Tensor... inputs);

    /**
     * Returns one gradient per input (null where {@link FunctionContext#needsInputGrad} is false
     * or the input is not differentiable), each shaped like its input.
     */
    protected abstract Tensor[] backward(FunctionContext ctx, Tensor gradOutput);

    /** Name of the node in the graph, shown as {@code grad_fn=<...>}. */
    protected String name() {
        return getClass().getSimpleName() + "Backward";
    }

    /** Runs forward and, if grad mode is on and an input requires grad, records one node. */
    public final Tensor apply(Tensor... inputs) {
        boolean[] needs = new boolean[inputs.length];
        boolean any = false;
        for (int i = 0; i < inputs.length; i++) {
            needs[i] = inputs[i] != null && inputs[i].requiresGrad();
            any |= needs[i];
        }
        FunctionContext ctx = new FunctionContext(needs);
        Tensor out;
        try (var scope = Autograd.noGrad()) {
            out = forward(ctx, inputs);
        }
        if (!any || !GradMode.isEnabled()) {
            return out;
        }
        Edge[] edges = new Edge[inputs.length];
        int[][] shapes = new int[inputs.length][];
        DType[] dtypes = new DType[inputs.length];
        for (int i = 0; i < inputs.length; i++) {
            if (needs[i]) {
                edges[i] = inputs[i].gradientEdge();
                shapes[i] = inputs[i].shape();
                dtypes[i] = inputs[i].dtype();
            }
        }
        return out.withGradFn(new FunctionNode(name(), edges, shapes, dtypes, this, ctx), 0);
    }

    private static final class FunctionNode extends Node {
        private final Function function;
        private final FunctionContext ctx;

        FunctionNode(String name, Edge[] edges, int[][] shapes, DType[] dtypes, Function function, FunctionContext ctx) {
            super(name, edges, shapes, dtypes);
            this.function = function;
            this.ctx = ctx;
        }

        @Override
        protected Tensor[] apply(Tensor[] gradOutputs) {
            Tensor g = gradOutputs[0];
            return function.backward(ctx, g);
        }

        @Override
        protected void release() {
            ctx.release();
        }
    }
}
