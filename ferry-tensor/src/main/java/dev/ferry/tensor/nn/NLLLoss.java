package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/**
 * {@code torch.nn.NLLLoss}: {@link Functional#nllLoss} as an object, for log-probabilities a model
 * already produced (e.g. through {@code logSoftmax}).
 */
public final class NLLLoss {
    /**
     * Immutable settings; start from {@link NLLLoss#defaults()} (PyTorch's).
     *
     * @param reduction   how the per-element losses combine
     * @param weight      a weight per class ({@code [C]}), or null for 1 each
     * @param ignoreIndex a target value that contributes nothing (PyTorch's default -100)
     */
    public record Options(Reduction reduction, Tensor weight, long ignoreIndex) {
        public Options {
            if (reduction == null) {
                throw new IllegalArgumentException("reduction must not be null");
            }
        }

        public Options withReduction(Reduction v) {
            return new Options(v, weight, ignoreIndex);
        }

        public Options withWeight(Tensor v) {
            return new Options(reduction, v, ignoreIndex);
        }

        public Options withIgnoreIndex(long v) {
            return new Options(reduction, weight, v);
        }
    }

    /** PyTorch's defaults: mean, no weight, ignore index -100. */
    public static Options defaults() {
        return new Options(Reduction.MEAN, null, -100);
    }

    private final Options options;

    public NLLLoss() {
        this(defaults());
    }

    public NLLLoss(Options options) {
        this.options = options;
    }

    public Options options() {
        return options;
    }

    public Tensor apply(Tensor logProbs, Tensor target) {
        return Functional.nllLoss(logProbs, target, options);
    }
}
