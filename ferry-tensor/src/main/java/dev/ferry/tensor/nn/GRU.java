package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A multi-layer gated recurrent unit network ({@code torch.nn.GRU}), written with ordinary tensor
 * ops so autograd (and distributed autograd) runs through it unchanged. For each layer and time
 * step, with PyTorch's gate order (reset, update, new):
 *
 * <pre>
 * r = σ(x·W_irᵀ + b_ir + h·W_hrᵀ + b_hr)
 * z = σ(x·W_izᵀ + b_iz + h·W_hzᵀ + b_hz)
 * n = tanh(x·W_inᵀ + b_in + r * (h·W_hnᵀ + b_hn))
 * h' = (1 - z) * n + z * h
 * </pre>
 *
 * <p>Input is {@code [seq, batch, inputSize]} ({@code [batch, seq, inputSize]} with
 * {@code batchFirst}) or unbatched {@code [seq, inputSize]}; the hidden state is
 * {@code [numLayers, batch, hiddenSize]} ({@code [numLayers, hiddenSize]} unbatched). Parameters are
 * named and initialised as in PyTorch ({@code weight_ih_l0}, {@code weight_hh_l0}, {@code bias_ih_l0},
 * {@code bias_hh_l0}, ..., uniform in ±1/√hiddenSize), so the same generator state gives the same
 * weights. Between layers, dropout applies in training mode when {@code dropout > 0}.
 *
 * <pre>
 * GRU gru = new GRU(256, 512, 2, 0.2, false, new Generator(0));
 * GRU.Result r = gru.forward(emb, h);              // h may be null (zeros)
 * h = r.hidden().detach();                         // truncated backprop through time
 * </pre>
 */
public class GRU extends Module {

    /** The top layer's hidden state at every step, and the final hidden state of every layer. */
    public record Result(Tensor output, Tensor hidden) {
    }

    private final int inputSize;
    private final int hiddenSize;
    private final int numLayers;
    private final double dropout;
    private final boolean batchFirst;
    private final Generator generator;
    /** Per layer: weight_ih, weight_hh, bias_ih, bias_hh. */
    private final List<Parameter[]> layers = new ArrayList<>();

    /** One layer, seq-first, initialised from the default generator, like {@code nn.GRU(in, hidden)}. */
    public GRU(int inputSize, int hiddenSize) {
        this(inputSize, hiddenSize, 1, 0, false, Generator.defaultGenerator());
    }

    /**
     * @param dropout   probability of zeroing outputs of every layer but the last, in training
     * @param generator initialises the weights, then draws the dropout masks
     */
    public GRU(int inputSize, int hiddenSize, int numLayers, double dropout, boolean batchFirst, Generator generator) {
        if (inputSize <= 0 || hiddenSize <= 0 || numLayers <= 0) {
            throw new IllegalArgumentException("GRU sizes must be positive, got input_size=" + inputSize
                    + ", hidden_size=" + hiddenSize + ", num_layers=" + numLayers);
        }
        if (dropout < 0 || dropout > 1) {
            throw new IllegalArgumentException("dropout should be a number in range [0, 1] representing the"
                    + " probability of an element being zeroed, got " + dropout);
        }
        this.inputSize = inputSize;
        this.hiddenSize = hiddenSize;
        this.numLayers = numLayers;
        this.dropout = dropout;
        this.batchFirst = batchFirst;
        this.generator = generator;
        int gates = 3 * hiddenSize;
        for (int k = 0; k < numLayers; k++) {
            layers.add(new Parameter[] {
                    registerParameter("weight_ih_l" + k,
                            new Parameter(Tensors.zeros(gates, k == 0 ? inputSize : hiddenSize))),
                    registerParameter("weight_hh_l" + k, new Parameter(Tensors.zeros(gates, hiddenSize))),
                    registerParameter("bias_ih_l" + k, new Parameter(Tensors.zeros(gates))),
                    registerParameter("bias_hh_l" + k, new Parameter(Tensors.zeros(gates)))});
        }
        double bound = 1 / Math.sqrt(hiddenSize);
        for (Tensor p : parameters()) { // PyTorch's order: layer by layer, ih then hh, weights then biases
            Init.uniform(p, -bound, bound, generator);
        }
    }

    /**
     * One step of one layer ({@code torch.gru_cell}): the next hidden state from input {@code x}
     * {@code [batch, in]} and hidden state {@code h} {@code [batch, hidden]}.
     */
    public static Tensor cell(Tensor x, Tensor h, Tensor weightIh, Tensor weightHh, Tensor biasIh, Tensor biasHh) {
        return step(Tensors.linear(x, weightIh, biasIh), h, weightHh, biasHh);
    }

    /** A step whose input projection {@code x·W_ihᵀ + b_ih} was computed beforehand. */
    private static Tensor step(Tensor inputGates, Tensor h, Tensor weightHh, Tensor biasHh) {
        List<Tensor> gi = inputGates.chunk(3, -1);
        List<Tensor> gh = Tensors.linear(h, weightHh, biasHh).chunk(3, -1);
        Tensor r = gi.get(0).add(gh.get(0)).sigmoid();
        Tensor z = gi.get(1).add(gh.get(1)).sigmoid();
        Tensor n = gi.get(2).add(r.mul(gh.get(2))).tanh();
        return n.add(z.mul(h.sub(n))); // (1 - z) * n + z * h
    }

    /** The output sequence, starting from a zero state. */
    @Override
    public Tensor forward(Tensor input) {
        return forward(input, null).output();
    }

    /** Runs the whole sequence from hidden state {@code hidden} (null for zeros). */
    public Result forward(Tensor input, Tensor hidden) {
        boolean batched = input.dim() == 3;
        if (!batched && input.dim() != 2) {
            throw new IllegalArgumentException("GRU: Expected input to be 2-D or 3-D but received " + input.dim()
                    + "-D tensor");
        }
        if (input.size(-1) != inputSize) {
            throw new IllegalArgumentException("input.size(-1) must be equal to input_size. Expected " + inputSize
                    + ", got " + input.size(-1));
        }
        Tensor x = !batched ? input.unsqueeze(1) : batchFirst ? input.transpose(0, 1) : input;
        int seq = x.size(0);
        int batch = x.size(1);
        Tensor h0;
        if (hidden == null) {
            h0 = Tensors.zeros(input.dtype(), numLayers, batch, hiddenSize);
        } else {
            int[] expected = batched ? new int[] {numLayers, batch, hiddenSize} : new int[] {numLayers, hiddenSize};
            if (!Arrays.equals(hidden.shape(), expected)) {
                throw new IllegalArgumentException("Expected hidden size " + Arrays.toString(expected) + ", got "
                        + Arrays.toString(hidden.shape()));
            }
            h0 = batched ? hidden : hidden.unsqueeze(1);
        }
        List<Tensor> hn = new ArrayList<>();
        for (int k = 0; k < numLayers; k++) {
            Parameter[] w = layers.get(k);
            // One product for the input projection of all steps; only h·W_hhᵀ is sequential.
            Tensor inputGates = Tensors.linear(x, w[0], w[2]);
            Tensor h = h0.select(0, k);
            List<Tensor> outputs = new ArrayList<>(seq);
            for (int t = 0; t < seq; t++) {
                h = step(inputGates.select(0, t), h, w[1], w[3]);
                outputs.add(h);
            }
            x = Tensors.stack(outputs, 0);
            if (k < numLayers - 1) {
                x = Functional.dropout(x, dropout, isTraining(), generator);
            }
            hn.add(h);
        }
        Tensor h = Tensors.stack(hn, 0);
        if (!batched) {
            return new Result(x.squeeze(1), h.squeeze(1));
        }
        return new Result(batchFirst ? x.transpose(0, 1) : x, h);
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
