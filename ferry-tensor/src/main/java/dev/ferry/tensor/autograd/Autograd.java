package dev.ferry.tensor.autograd;

import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Entry points of reverse-mode automatic differentiation.
 *
 * <pre>
 * Tensor w = Tensors.randn(3, 2).requiresGrad_(true);
 * Tensor loss = x.matmul(w).relu().sum();
 * loss.backward();                            // fills w.grad()
 * Tensor[] g = Autograd.grad(List.of(loss2), List.of(w), null);  // returns, leaves .grad alone
 * try (var scope = Autograd.noGrad()) { ... } // nothing recorded inside
 * </pre>
 *
 * <p>A pass runs on the calling thread. Grad mode is per thread. Passes over disjoint graphs may
 * run concurrently; passes sharing nodes must use {@code retainGraph} (the first pass to finish
 * would otherwise free what the others still need) and a sink each.
 */
public final class Autograd {
    private Autograd() {
    }

    /** Disables graph recording on this thread until the scope is closed. */
    public static GradMode.Scope noGrad() {
        return GradMode.set(false);
    }

    /** Enables graph recording on this thread until the scope is closed. */
    public static GradMode.Scope enableGrad() {
        return GradMode.set(true);
    }

    /** Sets graph recording on this thread until the scope is closed. */
    public static GradMode.Scope setGradEnabled(boolean enabled) {
        return GradMode.set(enabled);
    }

    public static boolean isGradEnabled() {
        return GradMode.isEnabled();
    }

    /**
     * Computes the gradients of {@code outputs} with respect to every leaf they depend on and adds
     * them to the leaves' {@code .grad} (as {@code torch.autograd.backward}).
     *
     * @param gradOutputs one per output, or null: then each output must be a scalar and gets 1
     */
    public static void backward(List<Tensor> outputs, List<Tensor> gradOutputs, boolean retainGraph,
                                boolean createGraph) {
        List<Edge> roots = rootEdges(outputs);
        Engine.run(roots, rootGrads(outputs, gradOutputs), GradientSink.ACCUMULATE_INTO_GRAD, retainGraph,
                createGraph, Set.of());
    }

    /**
     * Backward from scalar outputs (each seeded with 1) delivering leaf gradients to {@code sink}
     * instead of {@code .grad}: what {@code dist_autograd.backward(ctx, [loss])} does locally.
     */
    public static void backward(List<Tensor> outputs, GradientSink sink, boolean retainGraph) {
        Objects.requireNonNull(sink, "sink");
        Engine.run(rootEdges(outputs), rootGrads(outputs, null), sink, retainGraph, false, Set.of());
    }

    /**
     * The low-level form for callers that own the bookkeeping, e.g. distributed autograd: starts
     * at arbitrary graph edges and delivers leaf gradients to {@code sink} instead of {@code .grad}.
     *
     * @param roots       edges to start from (e.g. {@code loss.gradientEdge()}, or a send node)
     * @param gradOutputs the gradient flowing into each root edge
     * @param sink        receives each reached leaf's summed gradient
     */
    public static void backward(List<Edge> roots, List<Tensor> gradOutputs, GradientSink sink, boolean retainGraph) {
        Objects.requireNonNull(sink, "sink");
        if (roots.size() != gradOutputs.size()) {
            throw new IllegalArgumentException("got " + roots.size() + " roots but " + gradOutputs.size()
                    + " gradients");
        }
        Engine.run(roots, gradOutputs, sink, retainGraph, false, Set.of());
    }

    /**
     * Frees the saved tensors of every node reachable from {@code outputs}, as a backward pass
     * without {@code retainGraph} does once it is done: for passes that run in several parts over
     * one graph (distributed autograd runs its local part with the graph retained, because gradients
     * arriving from other workers may reach the same nodes, then frees it when the whole pass is
     * over). Outputs that do not require grad are skipped.
     */
    public static void releaseGraph(List<Tensor> outputs) {
        List<Edge> roots = new ArrayList<>(outputs.size());
        for (Tensor out : outputs) {
            if (out.requiresGrad()) {
                roots.add(out.gradientEdge());
            }
        }
        Engine.release(roots);
    }

    /**
     * Returns the gradients of {@code outputs} with respect to {@code inputs} without touching
     * {@code .grad} (as {@code torch.autograd.grad}). Only the part of the graph between them runs.
     *
     * @param gradOutputs one per output, or null for scalar outputs
     * @return one gradient per input
     */
    public static Tensor[] grad(List<Tensor> outputs, List<Tensor> inputs, List<Tensor> gradOutputs) {
        return grad(outputs, inputs, gradOutputs, false, false, false);
    }

    /**
     * {@link #grad(List, List, List)} with PyTorch's options.
     *
     * @param retainGraph keep saved tensors so the graph can be differentiated again
     * @param createGraph record the backward computation, so the result can be differentiated
     *                    (higher-order gradients); implies {@code retainGraph}
     * @param allowUnused return null for an input the outputs do not depend on, instead of failing
     */
    public static Tensor[] grad(List<Tensor> outputs, List<Tensor> inputs, List<Tensor> gradOutputs,
                                boolean retainGraph, boolean createGraph, boolean allowUnused) {
        List<Edge> roots = rootEdges(outputs);
        Edge[] inputEdges = new Edge[inputs.size()];
        for (int i = 0; i < inputEdges.length; i++) {
            Tensor in = inputs.get(i);
            if (!in.requiresGrad()) {
                throw new IllegalArgumentException("input " + i + " of grad() does not require grad");
            }
            inputEdges[i] = in.gradientEdge();
        }
        Set<Edge> captures = new LinkedHashSet<>(Arrays.asList(inputEdges));
        Map<Edge, Tensor> got = Engine.run(roots, rootGrads(outputs, gradOutputs), null,
                retainGraph || createGraph, createGraph, captures);
        Tensor[] result = new Tensor[inputs.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = got.get(inputEdges[i]);
            if (result[i] == null && !allowUnused) {
                throw new IllegalArgumentException("One of the differentiated tensors (input " + i
                        + ") appears to not have been used in the graph. Set allowUnused=true if this is the"
                        + " desired behavior.");
            }
        }
        return result;
    }

    private static List<Edge> rootEdges(List<Tensor> outputs) {
        List<Edge> roots = new ArrayList<>(outputs.size());
        for (int i = 0; i < outputs.size(); i++) {
            Tensor out = outputs.get(i);
            if (!out.requiresGrad()) {
                throw new IllegalArgumentException("element " + i
                        + " of tensors does not require grad and does not have a grad_fn");
            }
            roots.add(out.gradientEdge());
        }
        return roots;
    }

    private static List<Tensor> rootGrads(List<Tensor> outputs, List<Tensor> gradOutputs) {
        List<Tensor> grads = new ArrayList<>(outputs.size());
        for (int i = 0; i < outputs.size(); i++) {
            Tensor out = outputs.get(i);
            Tensor g = gradOutputs == null ? null : gradOutputs.get(i);
            if (g == null) {
                if (out.numel() != 1) {
                    throw new IllegalArgumentException("grad can be implicitly created only for scalar outputs"
                            + " (output " + i + " has shape " + Arrays.toString(out.shape()) + ")");
                }
                g = Tensors.onesLike(out);
            } else if (!Arrays.equals(g.shape(), out.shape())) {
                throw new IllegalArgumentException("Mismatch in shape: grad_output[" + i + "] has a shape of "
                        + Arrays.toString(g.shape()) + " and output[" + i + "] has a shape of "
                        + Arrays.toString(out.shape()));
            }
            grads.add(g);
        }
        return grads;
    }
}
