package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

/**
 * {@code y = x · weightᵀ + bias}, with PyTorch's default initialisation (Kaiming-uniform weight,
 * uniform bias in ±1/√in): the same generator state gives the same weights as
 * {@code torch.nn.Linear}.
 */
public class Linear extends Module {
    private final int inFeatures;
    private final int outFeatures;
    private final Parameter weight;
    private final Parameter bias;

    /** Initialised from the default generator, like {@code nn.Linear(in, out)}. */
    public Linear(int inFeatures, int outFeatures) {
        this(inFeatures, outFeatures, true, Generator.defaultGenerator());
    }

    public Linear(int inFeatures, int outFeatures, boolean bias, Generator generator) {
        this.inFeatures = inFeatures;
        this.outFeatures = outFeatures;
        this.weight = registerParameter("weight", new Parameter(Tensors.zeros(outFeatures, inFeatures)));
        Init.kaimingUniform(weight, Math.sqrt(5), generator);
        if (bias) {
            this.bias = registerParameter("bias", new Parameter(Tensors.zeros(outFeatures)));
            double bound = inFeatures > 0 ? 1 / Math.sqrt(inFeatures) : 0;
            Init.uniform(this.bias, -bound, bound, generator);
        } else {
            this.bias = null;
        }
    }

    public Parameter weight() {
        return weight;
    }

    /** The bias, or null. */
    public Parameter bias() {
        return bias;
    }

    @Override
    public Tensor forward(Tensor input) {
        if (input.size(-1) != inFeatures) {
            throw new IllegalArgumentException("Linear(in_features=" + inFeatures + ") got input with last dimension "
                    + input.size(-1));
        }
        return Tensors.linear(input, weight, bias);
    }

    @Override
    protected String extraRepr() {
        return "in_features=" + inFeatures + ", out_features=" + outFeatures + ", bias=" + (bias != null ? "True" : "False");
    }
}
