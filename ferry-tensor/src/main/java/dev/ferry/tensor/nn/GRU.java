package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

import java.util.ArrayList;
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
public class GRU extends RNNBase {

    /** The top layer's hidden state at every step, and the final hidden state of every layer. */
    public record Result(Tensor output, Tensor hidden) {
    }

    /** One layer, seq-first, initialised from the default generator, like {@code nn.GRU(in, hidden)}. */
    public GRU(int inputSize, int hiddenSize) {
        this(inputSize, hiddenSize, 1, 0, false, Generator.defaultGenerator());
    }

    /**
     * @param dropout   probability of zeroing outputs of every layer but the last, in training
     * @param generator initialises the weights, then draws the dropout masks
     */
    public GRU(int inputSize, int hiddenSize, int numLayers, double dropout, boolean batchFirst, Generator generator) {
        super("GRU", 3, inputSize, hiddenSize, numLayers, dropout, batchFirst, generator);
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
        Tensor x = sequenceFirst(input);
        int seq = x.size(0);
        int batch = x.size(1);
        Tensor h0 = hidden == null
                ? Tensors.zeros(input.dtype(), numLayers, batch, hiddenSize)
                : stateLayers("hidden", hidden, batched, batch);
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
            x = betweenLayers(Tensors.stack(outputs, 0), k);
            hn.add(h);
        }
        return new Result(inInputLayout(x, batched), stateInInputLayout(Tensors.stack(hn, 0), batched));
    }
}
