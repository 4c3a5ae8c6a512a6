package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

import java.util.function.UnaryOperator;

/**
 * Parameter-free element-wise layers: {@link ReLU}, {@link Tanh}, {@link Sigmoid}, {@link GELU}
 * (also made by {@link #relu()}, {@link #tanh()}, {@link #sigmoid()}, {@link #gelu()}).
 *
 * <pre>
 * Sequential mlp = new Sequential(new Linear(2, 64), new ReLU(), new Linear(64, 2));
 * </pre>
 */
public abstract sealed class Activation extends Module permits ReLU, Tanh, Sigmoid, GELU {
    private final String name;
    private final UnaryOperator<Tensor> fn;

    Activation(String name, UnaryOperator<Tensor> fn) {
        this.name = name;
        this.fn = fn;
    }

    public static Activation relu() {
        return new ReLU();
    }

    public static Activation tanh() {
        return new Tanh();
    }

    public static Activation sigmoid() {
        return new Sigmoid();
    }

    /** The exact GELU; {@code new GELU(GELU.Approximation.TANH)} for the tanh form. */
    public static Activation gelu() {
        return new GELU();
    }

    @Override
    public final Tensor forward(Tensor input) {
        return fn.apply(input);
    }

    @Override
    public String toString() {
        return name + "()";
    }
}
