package dev.ferry.tensor.autograd;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Tensor;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The backward pass: a topological sort of the graph reachable from the roots, then one sweep in
 * reverse order. Each node runs once, after every gradient for its outputs has been summed.
 */
final class Engine {
    private Engine() {
    }

    /**
     * @param roots     edges to start from
     * @param rootGrads gradient for each root edge
     * @param sink      receives leaf gradients; null to deliver none (functional {@code grad})
     * @param captures  edges whose incoming gradient is recorded into the returned map (may be empty)
     */
    static Map<Edge, Tensor> run(List<Edge> roots, List<Tensor> rootGrads, GradientSink sink,
                                 boolean retainGraph, boolean createGraph, Set<Edge> captures) {
        List<Node> order = reversePostOrder(roots);
        Set<Node> runnable = sink != null ? null : nodesLeadingTo(order, captures);
        Map<Node, Tensor[]> pending = new IdentityHashMap<>();
        for (int i = 0; i < roots.size(); i++) {
            addGrad(pending, roots.get(i), rootGrads.get(i));
        }
        Map<Edge, Tensor> captured = new HashMap<>();
        try (var mode = GradMode.set(createGraph)) {
            for (Node node : order) {
                Tensor[] grads = pending.remove(node);
                if (grads == null) {
                    continue;
                }
                for (int out = 0; out < grads.length; out++) {
                    Edge edge = new Edge(node, out);
                    if (captures.contains(edge)) {
                        captured.put(edge, grads[out]);
                    }
                }
                if (node instanceof AccumulateGrad acc) {
                    if (sink != null && grads[0] != null) {
                        sink.accumulate(acc.variable(), grads[0]);
                    }
                    continue;
                }
                if (runnable != null && !runnable.contains(node)) {
                    continue;
                }
                Tensor[] inputGrads = node.apply(grads);
                checkGrads(node, inputGrads);
                for (int i = 0; i < inputGrads.length; i++) {
                    Edge next = node.nextEdge(i);
                    if (next != null && inputGrads[i] != null) {
                        addGrad(pending, next, inputGrads[i]);
                    }
                }
                if (!retainGraph) {
                    node.release();
                }
            }
        }
        return captured;
    }

    private static void addGrad(Map<Node, Tensor[]> pending, Edge edge, Tensor grad) {
        Tensor[] slots = pending.computeIfAbsent(edge.node(), n -> new Tensor[n.numOutputs()]);
        Tensor old = slots[edge.outputNr()];
        slots[edge.outputNr()] = old == null ? grad : old.add(grad);
    }

    private static void checkGrads(Node node, Tensor[] grads) {
        if (grads == null || grads.length != node.numInputs()) {
            throw new IllegalStateException("function " + node.name() + " returned "
                    + (grads == null ? "null" : grads.length + " gradient(s)") + " but expected "
                    + node.numInputs() + " (one per input)");
        }
        for (int i = 0; i < grads.length; i++) {
            int[] expected = node.inputShape(i);
            if (expected != null && grads[i] != null && !Arrays.equals(expected, grads[i].shape())) {
                throw new IllegalStateException("function " + node.name() + " returned an invalid gradient at index "
                        + i + " - got " + Arrays.toString(grads[i].shape()) + " but expected shape "
                        + Arrays.toString(expected));
            }
            // An op that promoted its inputs (float32 + float64) computes every input's gradient in
            // the promoted dtype; each input gets its own back (PyTorch's validate_outputs).
            DType dtype = node.inputDtype(i);
            if (dtype != null && grads[i] != null && grads[i].dtype() != dtype) {
                grads[i] = grads[i].to(dtype);
            }
        }
    }

    /** Frees the saved tensors of every node reachable from the roots. */
    static void release(List<Edge> roots) {
        for (Node node : reversePostOrder(roots)) {
            node.release();
        }
    }

        /** Every node reachable from the roots, each before all the nodes it sends gradients to. */
    static List<Node> reversePostOrder(List<Edge> roots) {
        Set<Node> visited = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Node> postOrder = new ArrayList<>();
        // Iterative DFS (deep graphs, e.g. long RNN unrolls, would overflow the Java stack).
        Deque<Object[]> stack = new ArrayDeque<>();
        for (Edge root : roots) {
            if (visited.add(root.node())) {
                stack.push(new Object[] {root.node(), 0});
            }
            while (!stack.isEmpty()) {
                Object[] top = stack.peek();
                Node node = (Node) top[0];
                int i = (Integer) top[1];
                if (i < node.numInputs()) {
                    top[1] = i + 1;
                    Edge next = node.nextEdge(i);
                    if (next != null && visited.add(next.node())) {
                        stack.push(new Object[] {next.node(), 0});
                    }
                } else {
                    stack.pop();
                    postOrder.add(node);
                }
            }
        }
        Collections.reverse(postOrder);
        return postOrder;
    }

    /**
     * Nodes worth running when only the capture edges matter: those with an input edge into a
     * node whose gradient is needed (a capture target, or a node that itself leads to one).
     */
    private static Set<Node> nodesLeadingTo(List<Node> order, Set<Edge> captures) {
        Set<Node> needed = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Edge e : captures) {
            needed.add(e.node());
        }
        Set<Node> runnable = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int k = order.size() - 1; k >= 0; k--) { // inputs before the nodes that feed them
            Node node = order.get(k);
            for (int i = 0; i < node.numInputs(); i++) {
                Edge next = node.nextEdge(i);
                if (next != null && needed.contains(next.node())) {
                    runnable.add(node);
                    needed.add(node);
                    break;
                }
            }
        }
        return runnable;
    }
}
