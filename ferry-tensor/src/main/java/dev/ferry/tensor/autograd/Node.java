package dev.ferry.tensor.autograd;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A function in the backward graph. It receives the gradients of its outputs and returns the
 * gradients of its inputs; {@link #nextEdges()} says where each input gradient goes (null for an
 * input that does not require grad).
 *
 * <p>Built-in ops create their nodes themselves; user code normally writes a {@link Function}
 * instead. Subclassing {@code Node} directly is for code that wires the graph by hand, e.g. the
 * send/receive functions of distributed autograd, which start a backward pass at a node with
 * {@link Autograd#backward(List, List, GradientSink, boolean)}.
 */
public abstract class Node {
    private final String name;
    private final Edge[] nextEdges;
    private final int[][] inputShapes;
    private final DType[] inputDtypes;

    /**
     * @param name        shown in {@code grad_fn=<name>} and in error messages
     * @param nextEdges   one entry per input, null where that input needs no gradient
     * @param inputShapes optional expected shape of each input gradient (checked by the engine),
     *                    or null to skip the check
     */
    protected Node(String name, Edge[] nextEdges, int[][] inputShapes) {
        this(name, nextEdges, inputShapes, null);
    }

    /**
     * @param inputDtypes optional dtype of each input (null entries, or null, for none): the engine
     *                    casts an input gradient of another dtype to it, as PyTorch's does, so that
     *                    the float32 input of an op promoted to float64 gets a float32 gradient
     */
    protected Node(String name, Edge[] nextEdges, int[][] inputShapes, DType[] inputDtypes) {
        this.name = name;
        this.nextEdges = nextEdges.clone();
        this.inputShapes = inputShapes == null ? null : inputShapes.clone();
        this.inputDtypes = inputDtypes == null ? null : inputDtypes.clone();
        if (inputShapes != null && inputShapes.length != nextEdges.length) {
            throw new IllegalArgumentException("inputShapes and nextEdges differ in length");
        }
        if (inputDtypes != null && inputDtypes.length != nextEdges.length) {
            throw new IllegalArgumentException("inputDtypes and nextEdges differ in length");
        }
    }

    public final String name() {
        return name;
    }

    /** Where each input gradient goes; null entries are inputs that need no gradient. */
    public final List<Edge> nextEdges() {
        return Collections.unmodifiableList(Arrays.asList(nextEdges));
    }

    final Edge nextEdge(int i) {
        return nextEdges[i];
    }

    final int numInputs() {
        return nextEdges.length;
    }

    final int[] inputShape(int i) {
        return inputShapes == null ? null : inputShapes[i];
    }

    final DType inputDtype(int i) {
        return inputDtypes == null ? null : inputDtypes[i];
    }

    /** Number of outputs (gradients this node receives). */
    public int numOutputs() {
        return 1;
    }

    /**
     * Computes input gradients from output gradients.
     *
     * @param gradOutputs one per output; an entry is null when no gradient reached that output
     *                    (treat it as zeros)
     * @return one per input (same length as {@link #nextEdges()}); null means "no gradient"
     */
    protected abstract Tensor[] apply(Tensor[] gradOutputs);

    /** Called after a backward pass without {@code retainGraph}: drop saved tensors here. */
    protected void release() {
    }

    @Override
    public String toString() {
        return name;
    }
}
