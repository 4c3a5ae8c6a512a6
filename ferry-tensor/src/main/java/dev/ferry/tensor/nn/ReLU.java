package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/** {@code torch.nn.ReLU}: max(0, x) element-wise. */
public final class ReLU extends Activation {
    public ReLU() {
        super("ReLU", Tensor::relu);
    }
}
