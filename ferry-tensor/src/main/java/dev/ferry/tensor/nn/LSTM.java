package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.ArrayList;
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
public class LSTM extends RNNBase {

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

    /** One layer, seq-first, initialised from the default generator, like {@code nn.LSTM(in, hidden)}. */
    public LSTM(int inputSize, int hiddenSize) {
        this(inputSize, hiddenSize, 1, 0, false, Generator.defaultGenerator());
    }

    /**
     * @param dropout   probability of zeroing outputs of every layer but the last, in training
     * @param generator initialises the weights, then draws the dropout masks
     */
    public LSTM(int inputSize, int hiddenSize, int numLayers, double dropout, boolean batchFirst, Generator generator) {
        super("LSTM", 4, inputSize, hiddenSize, numLayers, dropout, batchFirst, generator);
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
        Tensor x = sequenceFirst(input);
        int seq = x.size(0);
        int batch = x.size(1);
        Tensor h0;
        Tensor c0;
        if (state == null) {
            h0 = Tensors.zeros(input.dtype(), numLayers, batch, hiddenSize);
            c0 = h0;
        } else {
            h0 = stateLayers("hidden hx[0]", state.h(), batched, batch);
            c0 = stateLayers("hidden hx[1]", state.c(), batched, batch);
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
            x = betweenLayers(Tensors.stack(outputs, 0), k);
            hn.add(s.h());
            cn.add(s.c());
        }
        State last = new State(stateInInputLayout(Tensors.stack(hn, 0), batched),
                stateInInputLayout(Tensors.stack(cn, 0), batched));
        return new Result(inInputLayout(x, batched), last);
    }
}
