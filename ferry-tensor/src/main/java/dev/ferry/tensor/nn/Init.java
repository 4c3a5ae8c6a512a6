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

    /** Fills {@code t} with normal values of the given mean and standard deviation. */
    public static Tensor normal(Tensor t, double mean, double std, Generator generator) {
        try (var scope = Autograd.noGrad()) {
            return t.normal_(mean, std, generator);
        }
    }

    /** Fills {@code t} with {@code value}. */
    public static Tensor constant(Tensor t, double value) {
        try (var scope = Autograd.noGrad()) {
            return t.fill_(value);
        }
    }

    /** Kaiming-normal with leaky-ReLU slope {@code a}, fan-in mode: std = gain / √fanIn. */
    public static Tensor kaimingNormal(Tensor t, double a, Generator generator) {
        return normal(t, 0, Math.sqrt(2.0 / (1 + a * a)) / Math.sqrt(fanIn(t)), generator);
    }

    /** Xavier/Glorot normal: std = gain · √(2 / (fanIn + fanOut)). */
    public static Tensor xavierNormal(Tensor t, double gain, Generator generator) {
        return normal(t, 0, gain * Math.sqrt(2.0 / (fanIn(t) + fanOut(t))), generator);
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
        double std = gain * Math.sqrt(2.0 / (fanIn(t) + fanOut(t)));
        double bound = Math.sqrt(3.0) * std;
        return uniform(t, -bound, bound, generator);
    }

    /** Fan-out of a weight of shape [out, in, ...]. */
    static int fanOut(Tensor t) {
        fanIn(t); // same shape check
        return t.size(0) * (t.numel() / (t.size(0) * t.size(1)));
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
