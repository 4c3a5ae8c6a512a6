package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.autograd.Autograd;

/**
 * Parameter initialisation ({@code torch.nn.init}). The bounds are computed exactly as PyTorch
 * does, so with the same seed the values match PyTorch's.
 */
public final class Init {
    private Init() {
    }

    /** Fills {@code t} uniformly in [from, to). */
    public static Tensor uniform(Tensor t, double from, double to, Generator generator) {
        try (var scope = Autograd.noGrad()) {
            return t.uniform_(from, to, generator);
        }
    }

    /** Kaiming-uniform with leaky-ReLU slope {@code a}, fan-in mode (nn.Linear uses a = sqrt(5)). */
    public static Tensor kaimingUniform(Tensor t, double a, Generator generator) {
        int fanIn = fanIn(t);
        double gain = Math.sqrt(2.0 / (1 + a * a));
        double std = gain / Math.sqrt(fanIn);
        double bound = Math.sqrt(3.0) * std;
        return uniform(t, -bound, bound, generator);
    }

    /** Xavier/Glorot uniform. */
    public static Tensor xavierUniform(Tensor t, double gain, Generator generator) {
        int fanIn = fanIn(t);
        int fanOut = t.size(0) * (t.numel() / (t.size(0) * t.size(1)));
        double std = gain * Math.sqrt(2.0 / (fanIn + fanOut));
        double bound = Math.sqrt(3.0) * std;
        return uniform(t, -bound, bound, generator);
    }

    /** Fan-in of a weight of shape [out, in, ...]. */
    static int fanIn(Tensor t) {
        if (t.dim() < 2) {
            throw new IllegalArgumentException("Fan in and fan out can not be computed for tensor with fewer than 2"
                    + " dimensions");
        }
        return t.size(1) * (t.numel() / (t.size(0) * t.size(1)));
    }
}
