package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.autograd.Autograd;

/**
 * A lookup table of {@code numEmbeddings} vectors of size {@code embeddingDim}
 * ({@code torch.nn.Embedding}): integer indices of any shape in, their rows out (one more dim).
 * The weight starts as standard normal values (PyTorch's initialisation, so the same generator
 * state gives the same table); a {@code paddingIdx} row starts at zero and never receives a gradient.
 *
 * <pre>
 * Embedding emb = new Embedding(10_000, 256);
 * Tensor x = emb.forward(tokens);          // tokens: int64 [seq, batch] → float32 [seq, batch, 256]
 * </pre>
 */
public class Embedding extends Module {
    private final int numEmbeddings;
    private final int embeddingDim;
    private final Integer paddingIdx;
    private final Parameter weight;

    /** Initialised from the default generator, like {@code nn.Embedding(num, dim)}. */
    public Embedding(int numEmbeddings, int embeddingDim) {
        this(numEmbeddings, embeddingDim, null, Generator.defaultGenerator());
    }

    /**
     * @param paddingIdx a row that stays constant (zero unless loaded otherwise), or null;
     *                   negative values count from the end
     */
    public Embedding(int numEmbeddings, int embeddingDim, Integer paddingIdx, Generator generator) {
        if (numEmbeddings < 0 || embeddingDim < 0) {
            throw new IllegalArgumentException("Embedding sizes must be non-negative, got " + numEmbeddings + " and "
                    + embeddingDim);
        }
        if (paddingIdx != null && (paddingIdx >= numEmbeddings || paddingIdx < -numEmbeddings)) {
            throw new IllegalArgumentException("Padding_idx must be within num_embeddings (got " + paddingIdx + " for "
                    + numEmbeddings + ")");
        }
        this.numEmbeddings = numEmbeddings;
        this.embeddingDim = embeddingDim;
        this.paddingIdx = paddingIdx == null ? null : Integer.valueOf(Math.floorMod(paddingIdx, numEmbeddings));
        this.weight = registerParameter("weight",
                new Parameter(Tensors.randn(generator, numEmbeddings, embeddingDim)));
        if (this.paddingIdx != null) {
            try (var scope = Autograd.noGrad()) {
                weight.select(0, this.paddingIdx).zero_();
            }
        }
    }

    public Parameter weight() {
        return weight;
    }

    /** The padding row (non-negative), or null. */
    public Integer paddingIdx() {
        return paddingIdx;
    }

    /** Rows for {@code indices} (int64 or int32, any shape): shape {@code indices.shape + [embeddingDim]}. */
    @Override
    public Tensor forward(Tensor indices) {
        return Functional.embedding(indices, weight, paddingIdx);
    }

    @Override
    protected String extraRepr() {
        return numEmbeddings + ", " + embeddingDim + (paddingIdx != null ? ", padding_idx=" + paddingIdx : "");
    }
}
