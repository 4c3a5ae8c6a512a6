package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/**
 * {@code torch.nn.CrossEntropyLoss}: {@link Functional#crossEntropy} as an object (logits
 * {@code [N, C]} or {@code [N, C, d...]}, int64 class indices {@code [N]} or {@code [N, d...]}).
 *
 * <pre>
 * CrossEntropyLoss loss = new CrossEntropyLoss(CrossEntropyLoss.defaults()
 *         .withWeight(classWeights).withIgnoreIndex(PAD).withLabelSmoothing(0.1));
 * </pre>
 */
public final class CrossEntropyLoss {
    /**
     * Immutable settings; start from {@link CrossEntropyLoss#defaults()} (PyTorch's).
     *
     * @param reduction      how the per-element losses combine
     * @param weight         a weight per class ({@code [C]}), or null for 1 each
     * @param ignoreIndex    a target value that contributes nothing (PyTorch's default -100)
     * @param labelSmoothing in [0, 1]: how much of each target's mass is spread over all classes
     */
    public record Options(Reduction reduction, Tensor weight, long ignoreIndex, double labelSmoothing) {
        public Options {
            if (reduction == null) {
                throw new IllegalArgumentException("reduction must not be null");
            }
            if (!(labelSmoothing >= 0 && labelSmoothing <= 1)) {
                throw new IllegalArgumentException("label_smoothing must be between 0.0 and 1.0. Got: " + labelSmoothing);
            }
        }

        public Options withReduction(Reduction v) {
            return new Options(v, weight, ignoreIndex, labelSmoothing);
        }

        public Options withWeight(Tensor v) {
            return new Options(reduction, v, ignoreIndex, labelSmoothing);
        }

        public Options withIgnoreIndex(long v) {
            return new Options(reduction, weight, v, labelSmoothing);
        }

        public Options withLabelSmoothing(double v) {
            return new Options(reduction, weight, ignoreIndex, v);
        }
    }

    /** PyTorch's defaults: mean, no weight, ignore index -100, no label smoothing. */
    public static Options defaults() {
        return new Options(Reduction.MEAN, null, -100, 0);
    }

    private final Options options;

    public CrossEntropyLoss() {
        this(defaults());
    }

    public CrossEntropyLoss(Reduction reduction) {
        this(defaults().withReduction(reduction));
    }

    public CrossEntropyLoss(Options options) {
        this.options = options;
    }

    public Options options() {
        return options;
    }

    public Tensor apply(Tensor logits, Tensor target) {
        return Functional.crossEntropy(logits, target, options);
    }
}
