package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/** {@code torch.nn.Sigmoid}: 1 / (1 + exp(-x)) element-wise. */
public final class Sigmoid extends Activation {
    public Sigmoid() {
        super("Sigmoid", Tensor::sigmoid);
    }
}
