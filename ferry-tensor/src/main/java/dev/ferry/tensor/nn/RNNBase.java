package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What {@link LSTM} and {@link GRU} share ({@code torch.nn.RNNBase}): the size checks, the
 * per-layer parameters named and initialised as PyTorch's ({@code weight_ih_l0},
 * {@code weight_hh_l0}, {@code bias_ih_l0}, {@code bias_hh_l0}, ..., uniform in ±1/√hiddenSize,
 * layer by layer), the input layouts ({@code [seq, batch, in]}, batch-first, unbatched), dropout
 * between layers and the printed form. Subclasses run the time steps.
 */
abstract class RNNBase extends Module {
    private final String mode;
    final int inputSize;
    final int hiddenSize;
    final int numLayers;
    final double dropout;
    final boolean batchFirst;
    final Generator generator;
    /** Per layer: weight_ih, weight_hh, bias_ih, bias_hh. */
    final List<Parameter[]> layers = new ArrayList<>();

    /**
     * @param mode  the name in messages and in the printed form ({@code "LSTM"}, {@code "GRU"})
     * @param gates how many gates' rows the weights stack (4 for an LSTM, 3 for a GRU)
     */
    RNNBase(String mode, int gates, int inputSize, int hiddenSize, int numLayers, double dropout,
            boolean batchFirst, Generator generator) {
        if (inputSize <= 0 || hiddenSize <= 0 || numLayers <= 0) {
            throw new IllegalArgumentException(mode + " sizes must be positive, got input_size=" + inputSize
                    + ", hidden_size=" + hiddenSize + ", num_layers=" + numLayers);
        }
        if (dropout < 0 || dropout > 1) {
            throw new IllegalArgumentException("dropout should be a number in range [0, 1] representing the"
                    + " probability of an element being zeroed, got " + dropout);
        }
        this.mode = mode;
        this.inputSize = inputSize;
        this.hiddenSize = hiddenSize;
        this.numLayers = numLayers;
        this.dropout = dropout;
        this.batchFirst = batchFirst;
        this.generator = generator;
        int rows = gates * hiddenSize;
        for (int k = 0; k < numLayers; k++) {
            layers.add(new Parameter[] {
                    registerParameter("weight_ih_l" + k,
                            new Parameter(Tensors.zeros(rows, k == 0 ? inputSize : hiddenSize))),
                    registerParameter("weight_hh_l" + k, new Parameter(Tensors.zeros(rows, hiddenSize))),
                    registerParameter("bias_ih_l" + k, new Parameter(Tensors.zeros(rows))),
                    registerParameter("bias_hh_l" + k, new Parameter(Tensors.zeros(rows)))});
        }
        double bound = 1 / Math.sqrt(hiddenSize);
        for (Tensor p : parameters()) { // PyTorch's order: layer by layer, ih then hh, weights then biases
            Init.uniform(p, -bound, bound, generator);
        }
    }

    /** {@code input} as {@code [seq, batch, inputSize]}, after checking its rank and last size. */
    final Tensor sequenceFirst(Tensor input) {
        boolean batched = input.dim() == 3;
        if (!batched && input.dim() != 2) {
            throw new IllegalArgumentException(mode + ": Expected input to be 2-D or 3-D but received "
                    + input.dim() + "-D tensor");
        }
        if (input.size(-1) != inputSize) {
            throw new IllegalArgumentException("input.size(-1) must be equal to input_size. Expected " + inputSize
                    + ", got " + input.size(-1));
        }
        return !batched ? input.unsqueeze(1) : batchFirst ? input.transpose(0, 1) : input;
    }

    /**
     * A given state tensor as {@code [numLayers, batch, hiddenSize]}, after checking it has the shape
     * that input calls for ({@code [numLayers, hiddenSize]} for unbatched input).
     */
    final Tensor stateLayers(String name, Tensor state, boolean batched, int batch) {
        int[] expected = batched ? new int[] {numLayers, batch, hiddenSize} : new int[] {numLayers, hiddenSize};
        if (!Arrays.equals(state.shape(), expected)) {
            throw new IllegalArgumentException("Expected " + name + " size " + Arrays.toString(expected) + ", got "
                    + Arrays.toString(state.shape()));
        }
        return batched ? state : state.unsqueeze(1);
    }

    /** Layer {@code k}'s output as the next layer's input: dropout between layers, in training. */
    final Tensor betweenLayers(Tensor output, int k) {
        return k < numLayers - 1 ? Functional.dropout(output, dropout, isTraining(), generator) : output;
    }

    /** The top layer's outputs {@code [seq, batch, hidden]} in the input's layout. */
    final Tensor inInputLayout(Tensor output, boolean batched) {
        return !batched ? output.squeeze(1) : batchFirst ? output.transpose(0, 1) : output;
    }

    /** A final state {@code [numLayers, batch, hidden]} in the input's layout. */
    static Tensor stateInInputLayout(Tensor state, boolean batched) {
        return batched ? state : state.squeeze(1);
    }

    public int hiddenSize() {
        return hiddenSize;
    }

    public int numLayers() {
        return numLayers;
    }

    @Override
    protected String extraRepr() {
        return inputSize + ", " + hiddenSize + (numLayers != 1 ? ", num_layers=" + numLayers : "")
                + (batchFirst ? ", batch_first=True" : "") + (dropout != 0 ? ", dropout=" + dropout : "");
    }
}
