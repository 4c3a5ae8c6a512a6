package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/** {@link Functional#crossEntropy} as an object (logits [N, C], int64 class indices [N]). */
public final class CrossEntropyLoss {
    private final Reduction reduction;

    public CrossEntropyLoss() {
        this(Reduction.MEAN);
    }

    public CrossEntropyLoss(Reduction reduction) {
        this.reduction = reduction;
    }

    public Tensor apply(Tensor logits, Tensor target) {
        return Functional.crossEntropy(logits, target, reduction);
    }
}
