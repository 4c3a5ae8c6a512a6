package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A multi-layer long short-term memory network ({@code torch.nn.LSTM}), written with ordinary
 * tensor ops so autograd (and later distributed autograd) runs through it unchanged. For each
 * layer and time step, with PyTorch's gate order (input, forget, cell, output):
 *
 * <pre>
 * i, f, g, o = chunk(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh, 4)
 * c' = σ(f) * c + σ(i) * tanh(g)
 * h' = σ(o) * tanh(c')
 * </pre>
 *
 * <p>Input is {@code [seq, batch, inputSize]} ({@code [batch, seq, inputSize]} with
 * {@code batchFirst}) or unbatched {@code [seq, inputSize]}; the state is a pair of
 * {@code [numLayers, batch, hiddenSize]} tensors ({@code [numLayers, hiddenSize]} unbatched).
 * Parameters are named and initialised as in PyTorch ({@code weight_ih_l0}, {@code weight_hh_l0},
 * {@code bias_ih_l0}, {@code bias_hh_l0}, ..., uniform in ±1/√hiddenSize), so the same generator
 * state gives the same weights. Between layers, dropout applies in training mode when
 * {@code dropout > 0}.
 *
 * <pre>
 * LSTM lstm = new LSTM(256, 512, 2, 0.2, false, new Generator(0));
 * LSTM.Result r = lstm.forward(emb, state);        // state may be null (zeros)
 * state = r.state().detach();                      // truncated backprop through time
 * </pre>
 */
public class LSTM extends Module {

    /** The hidden and cell state, each {@code [numLayers, batch, hiddenSize]}. */
    public record State(Tensor h, Tensor c) {
        /** The same values cut from the graph, to carry over between batches. */
        public State detach() {
            return new State(h.detach(), c.detach());
        }
    }

    /** The top layer's hidden state at every step, and the final state of every layer. */
    public record Result(Tensor output, State state) {
    }

    private final int inputSize;
    private final int hiddenSize;
    private final int numLayers;
    private final double dropout;
    private final boolean batchFirst;
    private final Generator generator;
    /** Per layer: weight_ih, weight_hh, bias_ih, bias_hh. */
    private final List<Parameter[]> layers = new ArrayList<>();

    /** One layer, seq-first, initialised from the default generator, like {@code nn.LSTM(in, hidden)}. */
    public LSTM(int inputSize, int hiddenSize) {
        this(inputSize, hiddenSize, 1, 0, false, Generator.defaultGenerator());
    }

    /**
     * @param dropout   probability of zeroing outputs of every layer but the last, in training
     * @param generator initialises the weights, then draws the dropout masks
     */
    public LSTM(int inputSize, int hiddenSize, int numLayers, double dropout, boolean batchFirst, Generator generator) {
        if (inputSize <= 0 || hiddenSize <= 0 || numLayers <= 0) {
            throw new IllegalArgumentException("LSTM sizes must be positive, got input_size=" + inputSize
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
        int gates = 4 * hiddenSize;
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
     * One step of one layer ({@code torch.lstm_cell}): the next state from input {@code x}
     * {@code [batch, in]} and state {@code h, c} {@code [batch, hidden]}.
     */
    public static State cell(Tensor x, State state, Tensor weightIh, Tensor weightHh, Tensor biasIh, Tensor biasHh) {
        return step(Tensors.linear(x, weightIh, biasIh), state, weightHh, biasHh);
    }

    /** A step whose input projection {@code x·W_ihᵀ + b_ih} was computed beforehand. */
    private static State step(Tensor inputGates, State state, Tensor weightHh, Tensor biasHh) {
        List<Tensor> g = inputGates.add(Tensors.linear(state.h(), weightHh, biasHh)).chunk(4, -1);
        Tensor c = g.get(1).sigmoid().mul(state.c()).add(g.get(0).sigmoid().mul(g.get(2).tanh()));
        Tensor h = g.get(3).sigmoid().mul(c.tanh());
        return new State(h, c);
    }

    /** The output sequence, starting from a zero state. */
    @Override
    public Tensor forward(Tensor input) {
        return forward(input, null).output();
    }

    /** Runs the whole sequence from {@code state} (null for zeros). */
    public Result forward(Tensor input, State state) {
        boolean batched = input.dim() == 3;
        if (!batched && input.dim() != 2) {
            throw new IllegalArgumentException("LSTM: Expected input to be 2-D or 3-D but received " + input.dim()
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
        Tensor c0;
        if (state == null) {
            h0 = Tensors.zeros(input.dtype(), numLayers, batch, hiddenSize);
            c0 = h0;
        } else {
            int[] expected = batched ? new int[] {numLayers, batch, hiddenSize} : new int[] {numLayers, hiddenSize};
            checkState("hx[0]", state.h(), expected);
            checkState("hx[1]", state.c(), expected);
            h0 = batched ? state.h() : state.h().unsqueeze(1);
            c0 = batched ? state.c() : state.c().unsqueeze(1);
        }
        List<Tensor> hn = new ArrayList<>();
        List<Tensor> cn = new ArrayList<>();
        for (int k = 0; k < numLayers; k++) {
            Parameter[] w = layers.get(k);
            // One product for the input projection of all steps; only h·W_hhᵀ is sequential.
            Tensor inputGates = Tensors.linear(x, w[0], w[2]);
            State s = new State(h0.select(0, k), c0.select(0, k));
            List<Tensor> outputs = new ArrayList<>(seq);
            for (int t = 0; t < seq; t++) {
                s = step(inputGates.select(0, t), s, w[1], w[3]);
                outputs.add(s.h());
            }
            x = Tensors.stack(outputs, 0);
            if (k < numLayers - 1) {
                x = Functional.dropout(x, dropout, isTraining(), generator);
            }
            hn.add(s.h());
            cn.add(s.c());
        }
        Tensor h = Tensors.stack(hn, 0);
        Tensor c = Tensors.stack(cn, 0);
        if (!batched) {
            return new Result(x.squeeze(1), new State(h.squeeze(1), c.squeeze(1)));
        }
        return new Result(batchFirst ? x.transpose(0, 1) : x, new State(h, c));
    }

    private static void checkState(String name, Tensor t, int[] expected) {
        if (!Arrays.equals(t.shape(), expected)) {
            throw new IllegalArgumentException("Expected hidden " + name + " size " + Arrays.toString(expected)
                    + ", got " + Arrays.toString(t.shape()));
        }
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
