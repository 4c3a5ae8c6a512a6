package dev.ferry.tensor.autograd;

import java.util.Objects;

/**
 * A gradient edge: output {@code outputNr} of the node {@code node}. The gradient of a tensor
 * flows into the edge returned by {@link dev.ferry.tensor.Tensor#gradientEdge()}.
 */
public record Edge(Node node, int outputNr) {
    public Edge {
        Objects.requireNonNull(node, "node");
        if (outputNr < 0 || outputNr >= node.numOutputs()) {
            throw new IllegalArgumentException("output " + outputNr + " out of range for " + node.name()
                    + " with " + node.numOutputs() + " output(s)");
        }
    }
}
