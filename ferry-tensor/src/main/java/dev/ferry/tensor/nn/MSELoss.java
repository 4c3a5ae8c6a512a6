package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/** {@link Functional#mseLoss} as an object. */
public final class MSELoss {
    private final Reduction reduction;

    public MSELoss() {
        this(Reduction.MEAN);
    }

    public MSELoss(Reduction reduction) {
        this.reduction = reduction;
    }

    public Tensor apply(Tensor input, Tensor target) {
        return Functional.mseLoss(input, target, reduction);
    }
}
