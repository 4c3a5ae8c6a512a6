package dev.ferry.tensor.nn;

import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;

/** Layer normalisation over the trailing dims, with learnable scale (1) and shift (0). */
public class LayerNorm extends Module {
    private final int[] normalizedShape;
    private final double eps;
    private final Parameter weight;
    private final Parameter bias;

    public LayerNorm(int... normalizedShape) {
        this.normalizedShape = normalizedShape.clone();
        this.eps = 1e-5;
        this.weight = registerParameter("weight", new Parameter(Tensors.ones(normalizedShape)));
        this.bias = registerParameter("bias", new Parameter(Tensors.zeros(normalizedShape)));
    }

    @Override
    public Tensor forward(Tensor input) {
        return Functional.layerNorm(input, normalizedShape, weight, bias, eps);
    }

    @Override
    protected String extraRepr() {
        return "(" + java.util.Arrays.toString(normalizedShape).replaceAll("[\\[\\]]", "")
                + (normalizedShape.length == 1 ? ",)" : ")") + ", eps=" + eps + ", elementwise_affine=True";
    }
}
