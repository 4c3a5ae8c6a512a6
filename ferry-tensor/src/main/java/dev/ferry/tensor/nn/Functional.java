package dev.ferry.tensor.nn;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import dev.ferry.tensor.autograd.Function;
import dev.ferry.tensor.autograd.FunctionContext;

import java.util.Arrays;

/**
 * Stateless neural-network functions ({@code torch.nn.functional}). All are differentiable, built
 * from tensor ops, so higher-order gradients work through them too.
 */
public final class Functional {
    private static final double SQRT_HALF = Math.sqrt(0.5);
    private static final double SQRT_TWO_OVER_PI = Math.sqrt(2 / Math.PI);
    private static final double GELU_TANH_KAPPA = 0.044715; // PyTorch's kKappa

    private Functional() {
    }

    /** {@code x · weightᵀ + bias} (bias may be null). */
    public static Tensor linear(Tensor x, Tensor weight, Tensor bias) {
        return Tensors.linear(x, weight, bias);
    }

    public static Tensor relu(Tensor x) {
        return x.relu();
    }

    /** The exact GELU, {@code x · ½ · (1 + erf(x / √2))}, as {@code torch.nn.functional.gelu(x)}. */
    public static Tensor gelu(Tensor x) {
        return gelu(x, GELU.Approximation.NONE);
    }

    /**
     * GELU exact or in PyTorch's tanh form ({@code approximate='tanh'}). Built from tensor ops, so
     * gradients of any order follow.
     */
    public static Tensor gelu(Tensor x, GELU.Approximation approximation) {
        return switch (approximation) {
            case NONE -> x.mul(x.mul(SQRT_HALF).erf().add(1)).mul(0.5);
            case TANH -> {
                Tensor inner = x.add(x.mul(x).mul(x).mul(GELU_TANH_KAPPA)).mul(SQRT_TWO_OVER_PI);
                yield x.mul(0.5).mul(inner.tanh().add(1));
            }
        };
    }

    public static Tensor softmax(Tensor x, int dim) {
        return x.softmax(dim);
    }

    public static Tensor logSoftmax(Tensor x, int dim) {
        return x.logSoftmax(dim);
    }

    /**
     * Zeroes each element with probability {@code p} and scales the rest by {@code 1/(1-p)} when
     * {@code training}; the identity otherwise.
     */
    public static Tensor dropout(Tensor x, double p, boolean training, Generator generator) {
        if (p < 0 || p > 1) {
            throw new IllegalArgumentException("dropout probability has to be between 0 and 1, but got " + p);
        }
        if (!training || p == 0) {
            return x;
        }
        if (p == 1) {
            return x.mul(0);
        }
        Tensor keep = Tensors.rand(generator, x.shape()).ge(p).to(x.dtype());
        return x.mul(keep).div(1 - p);
    }

    /**
     * Looks up rows of {@code weight} [num, dim] for integer {@code indices} of any shape; the
     * result has shape {@code indices.shape + [dim]}. The gradient of a row is the sum of the
     * gradients of every place it was picked, except for {@code paddingIdx} (null for none),
     * which gets no gradient, as in {@code torch.nn.functional.embedding}.
     */
    public static Tensor embedding(Tensor indices, Tensor weight, Integer paddingIdx) {
        if (indices.dtype() != DType.INT64 && indices.dtype() != DType.INT32) {
            throw new IllegalArgumentException("Expected tensor for argument #1 'indices' to have one of the following"
                    + " scalar types: Long, Int; but got " + indices.dtype() + " instead (while checking arguments"
                    + " for embedding)");
        }
        if (weight.dim() != 2) {
            throw new IllegalArgumentException("'weight' must be 2-D, got shape " + Arrays.toString(weight.shape()));
        }
        Tensor flat = indices.reshape(-1);
        for (long i : flat.toLongArray()) {
            if (i < 0 || i >= weight.size(0)) { // no counting from the end here, unlike indexSelect
                throw new IndexOutOfBoundsException("embedding: index " + i + " is out of range for "
                        + weight.size(0) + " embeddings");
            }
        }
        Tensor rows = weight.indexSelect(0, flat);
        if (paddingIdx != null) {
            // Same values, but rows picked by the padding index come from a detached copy: their
            // gradient stops here, so the padding row is never updated.
            int pad = paddingIdx < 0 ? paddingIdx + weight.size(0) : paddingIdx;
            Tensor learned = flat.ne(pad).unsqueeze(1);
            rows = Tensors.where(learned, rows, rows.detach());
        }
        int[] shape = Arrays.copyOf(indices.shape(), indices.dim() + 1);
        shape[indices.dim()] = weight.size(1);
        return rows.reshape(shape);
    }

    /**
     * Negative log-likelihood of class indices {@code target} under log-probabilities, averaged:
     * {@code nllLoss(logProbs, target, Reduction.MEAN)}.
     */
    public static Tensor nllLoss(Tensor logProbs, Tensor target) {
        return nllLoss(logProbs, target, NLLLoss.defaults());
    }

    /** {@code nllLoss} with PyTorch's other options at their defaults. */
    public static Tensor nllLoss(Tensor logProbs, Tensor target, Reduction reduction) {
        return nllLoss(logProbs, target, NLLLoss.defaults().withReduction(reduction));
    }

    /**
     * Negative log-likelihood of class indices (as {@code torch.nn.functional.nll_loss}). Shapes:
     * log-probabilities {@code [N, C]} with int64 target {@code [N]}; {@code [N, C, d1, ..., dk]}
     * with target {@code [N, d1, ..., dk]} (e.g. a loss per position of a sequence); or unbatched
     * {@code [C]} with a 0-dim target. Each element's loss is {@code -weight[t] * logProbs[t]}
     * (weight 1 without a weight), 0 where the target is the ignore index. {@code MEAN} divides
     * the sum by the summed weights of the targets not ignored (NaN when all are), {@code NONE}
     * returns one loss per target element, shaped like the target. The weight gets no gradient.
     */
    public static Tensor nllLoss(Tensor logProbs, Tensor target, NLLLoss.Options options) {
        return classLoss(logProbs, target, options.reduction(), options.weight(), options.ignoreIndex(), 0);
    }

    /** {@code nllLoss(logSoftmax(logits, 1), target)}, averaged over the batch. */
    public static Tensor crossEntropy(Tensor logits, Tensor target) {
        return crossEntropy(logits, target, CrossEntropyLoss.defaults());
    }

    /** {@code crossEntropy} with PyTorch's other options at their defaults. */
    public static Tensor crossEntropy(Tensor logits, Tensor target, Reduction reduction) {
        return crossEntropy(logits, target, CrossEntropyLoss.defaults().withReduction(reduction));
    }

    /**
     * {@code torch.nn.functional.cross_entropy}. With class-index targets: {@link #nllLoss} of
     * {@code logSoftmax(logits)} over the class dim (dim 1, or 0 unbatched), same shapes, weight,
     * ignore index and reductions; with label smoothing {@code ε} each element's loss is
     * {@code (1 - ε) · nll + ε / C · Σ_c -weight[c] · logProbs[c]}, and {@code MEAN} divides both
     * parts by the same summed target weights, as PyTorch 1.13 does. With a floating-point target
     * of the logits' shape (class probabilities, soft labels): {@code Σ_c -weight[c] · p[c] ·
     * logProbs[c]} per element, the probabilities first smoothed to {@code (1 - ε) · p + ε / C};
     * {@code MEAN} divides by the number of elements; there is no ignore index.
     */
    public static Tensor crossEntropy(Tensor logits, Tensor target, CrossEntropyLoss.Options options) {
        int classDim = logits.dim() == 1 ? 0 : 1;
        Tensor logProbs = logits.logSoftmax(classDim);
        if (Arrays.equals(logits.shape(), target.shape())) {
            return probabilityLoss(logProbs, target, classDim, options);
        }
        return classLoss(logProbs, target, options.reduction(), options.weight(), options.ignoreIndex(),
                options.labelSmoothing());
    }

    /** Cross entropy against class probabilities, PyTorch's cross_entropy_loss_prob_target. */
    private static Tensor probabilityLoss(Tensor logProbs, Tensor target, int classDim,
                                          CrossEntropyLoss.Options options) {
        if (!target.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("Expected floating point type for target with class probabilities, got "
                    + target.dtype());
        }
        if (options.ignoreIndex() >= 0) {
            throw new IllegalArgumentException("ignore_index is not supported for floating point target");
        }
        int classes = logProbs.size(classDim);
        Tensor weight = options.weight();
        if (weight != null && (weight.dim() != 1 || weight.size(0) != classes)) {
            throw new IllegalArgumentException("cross_entropy: weight tensor should be defined either for all " + classes
                    + " classes or no classes but got weight tensor of shape: " + Arrays.toString(weight.shape()));
        }
        double e = options.labelSmoothing();
        Tensor p = e > 0 ? target.mul(1 - e).add(e / classes) : target;
        Tensor terms = logProbs.mul(p);
        if (weight != null) {
            int[] alongClasses = new int[logProbs.dim()]; // [C] as [1, C, 1, ...] to broadcast over the rest
            Arrays.fill(alongClasses, 1);
            alongClasses[classDim] = classes;
            terms = terms.mul(weight.detach().to(logProbs.dtype()).reshape(alongClasses));
        }
        return switch (options.reduction()) {
            case NONE -> terms.sum(classDim).neg();
            case SUM -> terms.sum().neg();
            case MEAN -> terms.sum().neg().div(logProbs.numel() / classes);
        };
    }

    /** The one implementation of nll and cross entropy, on any of their shapes. */
    private static Tensor classLoss(Tensor logProbs, Tensor target, Reduction reduction, Tensor weight,
                                    long ignoreIndex, double labelSmoothing) {
        if (target.dtype() != DType.INT64) {
            throw new IllegalArgumentException("nll_loss: expected target of dtype int64 (class indices) but got "
                    + target.dtype());
        }
        int[] lossShape = lossShape(logProbs, target);
        // [N, C, d1..dk] and [C]: move the class dim last and flatten to [M, C], target to [M].
        Tensor flat = logProbs;
        if (logProbs.dim() == 1) {
            flat = logProbs.unsqueeze(0);
        } else if (logProbs.dim() > 2) {
            int[] perm = new int[logProbs.dim()];
            for (int d = 0, k = 0; d < logProbs.dim(); d++) {
                if (d != 1) {
                    perm[k++] = d;
                }
            }
            perm[logProbs.dim() - 1] = 1;
            flat = logProbs.permute(perm).reshape(-1, logProbs.size(1));
        }
        int classes = flat.size(1);
        if (weight != null && (weight.dim() != 1 || weight.size(0) != classes)) {
            throw new IllegalArgumentException("weight tensor should be defined either for all " + classes
                    + " classes or no classes but got weight tensor of shape: " + Arrays.toString(weight.shape()));
        }
        Tensor classes1d = target.reshape(-1);
        checkTargets(classes1d, classes, ignoreIndex);
        Tensor kept = classes1d.ne(ignoreIndex);
        Tensor picked = Tensors.where(kept, classes1d, Tensors.zerosLike(classes1d)); // ignored: any valid index
        Tensor w = weight == null ? null : weight.detach().to(flat.dtype());
        Tensor pickedWeight = kept.to(flat.dtype()); // each element's weight; 0 where ignored
        if (w != null) {
            Tensor targetWeight = w.gather(0, picked);
            pickedWeight = Tensors.where(kept, targetWeight, Tensors.zerosLike(targetWeight));
        }
        Tensor nll = flat.gather(1, picked.unsqueeze(1)).squeeze(1).neg();
        if (w != null) {
            nll = nll.mul(pickedWeight);
        }
        Tensor loss = nll;
        if (labelSmoothing > 0) {
            Tensor smooth = (w == null ? flat : flat.mul(w)).sum(1).neg();
            loss = nll.mul(1 - labelSmoothing).add(smooth.mul(labelSmoothing / classes));
        }
        // where(), not a product with the mask: a -inf log-probability of an ignored element stays out.
        loss = Tensors.where(kept, loss, Tensors.zerosLike(loss));
        return switch (reduction) {
            case NONE -> loss.reshape(lossShape);
            case SUM -> loss.sum();
            case MEAN -> loss.sum().div(pickedWeight.sum());
        };
    }

    /** The shape of the per-element losses (the target's), after checking the two shapes agree. */
    private static int[] lossShape(Tensor logProbs, Tensor target) {
        if (logProbs.dim() == 1 && target.dim() == 0) {
            return new int[0];
        }
        if (logProbs.dim() < 2) {
            throw new IllegalArgumentException("nll_loss: expected input of 1 to n dimensions, got input of shape "
                    + Arrays.toString(logProbs.shape()) + " and target of shape " + Arrays.toString(target.shape()));
        }
        if (target.dim() == 0 || logProbs.size(0) != target.size(0)) {
            throw new IllegalArgumentException("Expected input batch_size (" + logProbs.size(0)
                    + ") to match target batch_size (" + (target.dim() > 0 ? target.size(0) : 0) + ").");
        }
        int[] expected = new int[logProbs.dim() - 1];
        for (int d = 0, k = 0; d < logProbs.dim(); d++) {
            if (d != 1) {
                expected[k++] = logProbs.size(d);
            }
        }
        if (!Arrays.equals(target.shape(), expected)) {
            throw new IllegalArgumentException(logProbs.dim() == 2
                    ? "nll_loss: expected target of shape [" + logProbs.size(0) + "] for input of shape "
                            + Arrays.toString(logProbs.shape()) + ", got " + Arrays.toString(target.shape())
                    : "nll_loss: expected target size " + Arrays.toString(expected) + ", got "
                            + Arrays.toString(target.shape()));
        }
        return expected;
    }

    private static void checkTargets(Tensor target, int classes, long ignoreIndex) {
        for (long c : target.toLongArray()) {
            if (c != ignoreIndex && (c < 0 || c >= classes)) {
                throw new IndexOutOfBoundsException("Target " + c + " is out of bounds for " + classes + " classes.");
            }
        }
    }

    /** {@link #mseLoss(Tensor, Tensor, Reduction)} averaged. */
    public static Tensor mseLoss(Tensor input, Tensor target) {
        return mseLoss(input, target, Reduction.MEAN);
    }

    /**
     * The squared error of {@code input} against {@code target}, reduced.
     *
     * @throws IllegalArgumentException if the shapes differ: PyTorch broadcasts them with a warning
     *                                  that this "will likely lead to incorrect results" ({@code [N, 1]}
     *                                  against {@code [N]} averages an {@code [N, N]} grid), and a
     *                                  warning in a training loop goes unread; Ferry refuses
     */
    public static Tensor mseLoss(Tensor input, Tensor target, Reduction reduction) {
        if (!Arrays.equals(input.shape(), target.shape())) {
            throw new IllegalArgumentException("Using a target size (" + Arrays.toString(target.shape())
                    + ") that is different to the input size (" + Arrays.toString(input.shape()) + ") would broadcast"
                    + " them and likely give incorrect results; please ensure they have the same size");
        }
        return reduce(input.sub(target).square(), reduction);
    }

    /**
     * Binary cross-entropy of probabilities; log terms are clamped at -100 as in PyTorch.
     *
     * @throws IllegalArgumentException if {@code target}'s shape is not {@code probs}'s (PyTorch's
     *                                  refusal: broadcasting {@code [N]} against {@code [N, 1]} would
     *                                  average an {@code [N, N]} grid of wrong terms)
     */
    public static Tensor binaryCrossEntropy(Tensor probs, Tensor target) {
        if (!Arrays.equals(probs.shape(), target.shape())) {
            throw new IllegalArgumentException("Using a target size (" + Arrays.toString(target.shape())
                    + ") that is different to the input size (" + Arrays.toString(probs.shape())
                    + ") is deprecated. Please ensure they have the same size.");
        }
        return reduce(BINARY_CROSS_ENTROPY.apply(probs, target), Reduction.MEAN);
    }

    private static final Function BINARY_CROSS_ENTROPY = new BinaryCrossEntropy();

    /**
     * The unreduced loss, with PyTorch's derivatives rather than those of its formula: at a
     * probability of exactly 0 or 1 (a float32 sigmoid saturates from about 17) the formula's
     * derivative is {@code 0 * inf = NaN} through the clamped log, which one confident, correct
     * prediction would spread to every parameter. PyTorch's binary_cross_entropy_backward divides
     * by {@code max(p(1-p), 1e-12)} instead, and the target's derivative is
     * {@code log(1-p) - log(p)}, unclamped.
     */
    private static final class BinaryCrossEntropy extends Function {
        @Override
        protected Tensor forward(FunctionContext ctx, Tensor... in) {
            Tensor probs = in[0];
            Tensor target = in[1];
            ctx.saveForBackward(probs, target);
            Tensor logP = probs.log().clampMin(-100);
            Tensor log1mP = probs.neg().add(1).log().clampMin(-100);
            return target.mul(logP).add(target.neg().add(1).mul(log1mP)).neg();
        }

        @Override
        protected Tensor[] backward(FunctionContext ctx, Tensor grad) {
            Tensor probs = ctx.savedTensors()[0];
            Tensor target = ctx.savedTensors()[1];
            Tensor dProbs = ctx.needsInputGrad(0)
                    ? grad.mul(probs.sub(target)).div(probs.mul(probs.neg().add(1)).clampMin(1e-12)) : null;
            Tensor dTarget = ctx.needsInputGrad(1)
                    ? grad.mul(probs.neg().add(1).log().sub(probs.log())) : null;
            return new Tensor[] {dProbs, dTarget};
        }

        @Override
        protected String name() {
            return "BinaryCrossEntropyBackward0";
        }
    }

    /** Normalizes over the trailing {@code normalizedShape} dims; weight and bias may be null. */
    public static Tensor layerNorm(Tensor x, int[] normalizedShape, Tensor weight, Tensor bias, double eps) {
        int n = normalizedShape.length;
        if (n == 0) {
            throw new IllegalArgumentException("Expected normalized_shape to be at least 1-dimensional, i.e., containing"
                    + " at least one element, but got normalized_shape = []");
        }
        if (n > x.dim()
                || !Arrays.equals(Arrays.copyOfRange(x.shape(), x.dim() - n, x.dim()), normalizedShape)) {
            throw new IllegalArgumentException("Given normalized_shape=" + Arrays.toString(normalizedShape)
                    + ", expected input with shape [*, " + Arrays.toString(normalizedShape).replace("[", "")
                    + ", but got input of size" + Arrays.toString(x.shape()));
        }
        checkAffineShape("weight", weight, normalizedShape);
        checkAffineShape("bias", bias, normalizedShape);
        int[] dims = new int[n];
        for (int i = 0; i < n; i++) {
            dims[i] = x.dim() - n + i;
        }
        Tensor mean = x.mean(dims, true);
        Tensor var = x.var(dims, 0, true);
        Tensor y = x.sub(mean).div(var.add(eps).sqrt());
        if (weight != null) {
            y = y.mul(weight);
        }
        if (bias != null) {
            y = y.add(bias);
        }
        return y;
    }

    /** PyTorch refuses an affine tensor that would merely broadcast against the normalized dims. */
    private static void checkAffineShape(String what, Tensor t, int[] normalizedShape) {
        if (t != null && !Arrays.equals(t.shape(), normalizedShape)) {
            throw new IllegalArgumentException("Expected " + what + " to be of same shape as normalized_shape, but got "
                    + what + " of shape " + Arrays.toString(t.shape()) + " and normalized_shape = "
                    + Arrays.toString(normalizedShape));
        }
    }

    static Tensor reduce(Tensor loss, Reduction reduction) {
        return switch (reduction) {
            case NONE -> loss;
            case SUM -> loss.sum();
            case MEAN -> loss.mean();
        };
    }
}
