package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Tensor;

/**
 * Randomly zeroes elements with probability p during training and scales the others by
 * 1/(1-p); the identity in eval mode. The masks come from the given generator, so they are
 * reproducible but not PyTorch's (which draws them with {@code bernoulli_}).
 */
public class Dropout extends Module {
    private final double p;
    private final Generator generator;

    /** Masks drawn from the default generator, like {@code nn.Dropout(p)}. */
    public Dropout(double p) {
        this(p, Generator.defaultGenerator());
    }

    public Dropout(double p, Generator generator) {
        if (p < 0 || p > 1) {
            throw new IllegalArgumentException("dropout probability has to be between 0 and 1, but got " + p);
        }
        this.p = p;
        this.generator = generator;
    }

    @Override
    public Tensor forward(Tensor input) {
        return Functional.dropout(input, p, isTraining(), generator);
    }

    @Override
    protected String extraRepr() {
        return "p=" + p;
    }
}
