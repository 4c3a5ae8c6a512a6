package dev.ferry.tensor.nn;

import dev.ferry.tensor.Tensor;

import java.util.function.UnaryOperator;

/** Parameter-free element-wise layers: {@link #relu()}, {@link #tanh()}, {@link #sigmoid()}. */
public final class Activation extends Module {
    private final String name;
    private final UnaryOperator<Tensor> fn;

    private Activation(String name, UnaryOperator<Tensor> fn) {
        this.name = name;
        this.fn = fn;
    }

    public static Activation relu() {
        return new Activation("ReLU", Tensor::relu);
    }

    public static Activation tanh() {
        return new Activation("Tanh", Tensor::tanh);
    }

    public static Activation sigmoid() {
        return new Activation("Sigmoid", Tensor::sigmoid);
    }

    @Override
    public Tensor forward(Tensor input) {
        return fn.apply(input);
    }

    @Override
    public String toString() {
        return name + "()";
    }
}
