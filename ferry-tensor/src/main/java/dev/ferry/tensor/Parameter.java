package dev.ferry.tensor;

/**
 * A tensor that is a learnable parameter of a module ({@code torch.nn.Parameter}). It is an
 * ordinary leaf tensor that requires grad by default, sharing the storage of the tensor it wraps.
 * {@code Module.registerParameter} takes one, and {@code Module.parameters()} returns them.
 *
 * <pre>
 * Parameter w = new Parameter(Tensors.randn(3, 4));   // requires grad
 * Tensor y = x.matmul(w.t());                         // usable wherever a Tensor is
 * </pre>
 *
 * <p>It lives in {@code dev.ferry.tensor} rather than {@code nn} only because {@link Tensor} is
 * sealed and its permitted subclass must share its package.
 */
public final class Parameter extends Tensor {

    /** Wraps {@code data} (no copy, graph history dropped) as a parameter requiring grad. */
    public Parameter(Tensor data) {
        this(data, true);
    }

    /** Wraps {@code data}; a frozen parameter ({@code requiresGrad} false) is still listed by its module. */
    public Parameter(Tensor data, boolean requiresGrad) {
        super(data);
        requiresGrad_(requiresGrad);
    }

    /** PyTorch's form: {@code Parameter containing:} and the tensor on the next line. */
    @Override
    public String toString() {
        return "Parameter containing:\n" + super.toString();
    }
}
