package dev.ferry.tensor;

import dev.ferry.tensor.autograd.Edge;
import dev.ferry.tensor.autograd.GradMode;
import dev.ferry.tensor.autograd.Node;

/**
 * Records built-in ops in the backward graph. An op computes its result, then:
 *
 * <pre>
 * return Grad.of("MulBackward0", a, b).saving(a, b).record(out,
 *         g -> new Tensor[] {g.mul(b), g.mul(a)});
 * </pre>
 *
 * The backward lambda receives the output gradient and returns one gradient per input (null for
 * none); it is written with ordinary tensor ops, so higher-order gradients work when the pass
 * records ({@code createGraph}).
 */
final class Grad {
    @FunctionalInterface
    interface Backward {
        Tensor[] apply(Tensor grad);
    }

    private final String name;
    private final Tensor[] inputs;
    private Tensor[] saved = new Tensor[0];

    private Grad(String name, Tensor[] inputs) {
        this.name = name;
        this.inputs = inputs;
    }

    static Grad of(String name, Tensor... inputs) {
        return new Grad(name, inputs);
    }

    /** True if grad mode is on and some input requires grad, i.e. the op will be recorded. */
    static boolean needed(Tensor... inputs) {
        if (!GradMode.isEnabled()) {
            return false;
        }
        for (Tensor t : inputs) {
            if (t != null && t.requiresGrad()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Tensors the backward lambda reads: modifying one in place later makes backward fail. Null
     * entries (see {@link #readFor}) are skipped.
     */
    Grad saving(Tensor... tensors) {
        int kept = 0;
        for (Tensor t : tensors) {
            kept += t != null ? 1 : 0;
        }
        Tensor[] nonNull = new Tensor[kept];
        for (int i = 0, k = 0; i < tensors.length; i++) {
            if (tensors[i] != null) {
                nonNull[k++] = tensors[i];
            }
        }
        this.saved = nonNull;
        return this;
    }

    /**
     * {@code read} if the backward reads it, i.e. if {@code input}, whose gradient needs it, requires
     * grad; else null (for {@link #saving}). PyTorch saves by the same rule. It matters for the
     * products: a layer whose input needs no gradient does not read its weight in backward, so an
     * optimizer step on that weight before the backward (another trainer's, on a shared model) is no
     * error.
     */
    static Tensor readFor(Tensor input, Tensor read) {
        return input != null && input.requiresGrad() ? read : null;
    }

    /** Attaches a node to {@code out} if recording is needed; returns {@code out}. */
    Tensor record(Tensor out, Backward backward) {
        if (!needed(inputs)) {
            return out;
        }
        Edge[] edges = new Edge[inputs.length];
        int[][] shapes = new int[inputs.length][];
        DType[] dtypes = new DType[inputs.length];
        for (int i = 0; i < inputs.length; i++) {
            if (inputs[i] != null && inputs[i].requiresGrad()) {
                edges[i] = inputs[i].gradientEdge();
                shapes[i] = inputs[i].shapeRef();
                dtypes[i] = inputs[i].dtype();
            }
        }
        out.setHistory(new OpNode(name, edges, shapes, dtypes, backward, saved), 0);
        return out;
    }

    private static final class OpNode extends Node {
        private Backward backward;
        private Tensor[] saved;
        private final int[] versions;

        OpNode(String name, Edge[] edges, int[][] shapes, DType[] dtypes, Backward backward, Tensor[] saved) {
            super(name, edges, shapes, dtypes);
            this.backward = backward;
            this.saved = saved;
            this.versions = new int[saved.length];
            for (int i = 0; i < saved.length; i++) {
                versions[i] = saved[i].version();
            }
        }

        @Override
        protected Tensor[] apply(Tensor[] gradOutputs) {
            if (backward == null) {
                throw new IllegalStateException("Trying to backward through the graph a second time (or directly access"
                        + " saved tensors after they have already been freed). Saved intermediate values of the graph"
                        + " are freed when you call .backward() or autograd.grad(). Specify retainGraph=true if you"
                        + " need to backward through the graph a second time.");
            }
            for (int i = 0; i < saved.length; i++) {
                if (saved[i].version() != versions[i]) {
                    throw new IllegalStateException("one of the variables needed for gradient computation has been"
                            + " modified by an inplace operation: [" + saved[i].dtype() + " "
                            + java.util.Arrays.toString(saved[i].shapeRef()) + "], which is output 0 of "
                            + (saved[i].gradFn() == null ? "a leaf" : saved[i].gradFn().name()) + ", is at version "
                            + saved[i].version() + "; expected version " + versions[i] + " instead. (" + name()
                            + " needs it)");
                }
            }
            return backward.apply(gradOutputs[0]);
        }

        @Override
        protected void release() {
            backward = null;
            saved = new Tensor[0];
        }
    }
}
