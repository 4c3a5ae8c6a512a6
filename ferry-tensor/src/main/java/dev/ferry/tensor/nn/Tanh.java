package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

/** {@code torch.nn.Tanh}: tanh(x) element-wise. */
public final class Tanh extends Activation {
    public Tanh() {
        super("Tanh", Tensor::tanh);
    }
}
