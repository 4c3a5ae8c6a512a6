package dev.ferry.tensor;

import dev.ferry.tensor.autograd.GradMode;
import dev.ferry.tensor.internal.Shapes;
import dev.ferry.tensor.internal.kernels.BinaryKernels;
import dev.ferry.tensor.internal.kernels.BinaryOp;
import dev.ferry.tensor.internal.kernels.CopyKernels;

/**
 * In-place ops. They are not recorded: on a tensor that requires grad they are allowed only with
 * grad mode off (e.g. optimizer updates inside {@code Autograd.noGrad()}). Each bumps the storage
 * version so that backward can detect a modified saved tensor.
 */
final class InPlace {
    private InPlace() {
    }

    private static void check(Tensor t) {
        if (GradMode.isEnabled() && t.requiresGrad()) {
            if (t.isLeaf()) {
                throw new IllegalStateException("a leaf Variable that requires grad is being used in an in-place"
                        + " operation. Wrap the update in Autograd.noGrad() or use the out-of-place form.");
            }
            throw new IllegalStateException("in-place operations on tensors that are part of the autograd graph are"
                    + " not supported (tensor produced by " + t.gradFn().name() + "); use the out-of-place form");
        }
    }

    /** {@code other} converted to t's dtype, checking that the result can be stored in t. */
    private static Tensor operand(Tensor t, Tensor other) {
        DType result = DType.promote(t.dtype(), other.dtype());
        if (result.isFloatingPoint() && !t.dtype().isFloatingPoint()) {
            throw new IllegalArgumentException("result type " + result + " can't be cast to the desired output type "
                    + t.dtype());
        }
        int[] shape = Shapes.broadcast(t.shapeRef(), other.shapeRef());
        if (!java.util.Arrays.equals(shape, t.shapeRef())) {
            throw new IllegalArgumentException("output with shape " + Shapes.str(t.shapeRef())
                    + " doesn't match the broadcast shape " + Shapes.str(shape));
        }
        return other.dtype() == t.dtype() ? other : Conversions.contiguousCopy(other, t.dtype());
    }

    private static Tensor binary(Tensor t, BinaryOp op, Tensor other, double alpha) {
        check(t);
        Tensor b = operand(t, other);
        BinaryKernels.run(op, t, b, t, alpha);
        t.storage().bumpVersion();
        return t;
    }

    static Tensor add(Tensor t, Tensor other, double alpha) {
        return binary(t, BinaryOp.ADD, other, alpha);
    }

    static Tensor addScalar(Tensor t, double value) {
        return binary(t, BinaryOp.ADD, Elementwise.scalarLike(t, value), 1);
    }

    static Tensor mul(Tensor t, Tensor other) {
        return binary(t, BinaryOp.MUL, other, 1);
    }

    static Tensor mulScalar(Tensor t, double value) {
        return binary(t, BinaryOp.MUL, Elementwise.scalarLike(t, value), 1);
    }

    static Tensor addcmul(Tensor t, Tensor t1, Tensor t2, double value) {
        try (var scope = dev.ferry.tensor.autograd.Autograd.noGrad()) {
            return add(t, t1.mul(t2), value);
        }
    }

    static Tensor addcdiv(Tensor t, Tensor t1, Tensor t2, double value) {
        try (var scope = dev.ferry.tensor.autograd.Autograd.noGrad()) {
            return add(t, t1.div(t2), value);
        }
    }

    static Tensor fill(Tensor t, double value) {
        check(t);
        CopyKernels.fill(t, value);
        t.storage().bumpVersion();
        return t;
    }

    static Tensor copy(Tensor t, Tensor src) {
        check(t);
        int[] shape = Shapes.broadcast(t.shapeRef(), src.shapeRef());
        if (!java.util.Arrays.equals(shape, t.shapeRef())) {
            throw new IllegalArgumentException("copy_: source of shape " + Shapes.str(src.shapeRef())
                    + " cannot be broadcast to " + Shapes.str(t.shapeRef()));
        }
        CopyKernels.copy(src, t);
        t.storage().bumpVersion();
        return t;
    }

    static Tensor clamp(Tensor t, double min, double max) {
        check(t);
        Tensor c;
        try (var scope = dev.ferry.tensor.autograd.Autograd.noGrad()) {
            c = t.clamp(min, max);
        }
        CopyKernels.copy(c, t);
        t.storage().bumpVersion();
        return t;
    }

    /** Fills t's elements in row-major order from {@code values} (a contiguous tensor of t's dtype). */
    private static Tensor fillFrom(Tensor t, Tensor values) {
        CopyKernels.copy(values, t);
        t.storage().bumpVersion();
        return t;
    }

    static Tensor uniform(Tensor t, double from, double to, Generator gen) {
        check(t);
        return fillFrom(t, RandomFill.uniform(t.dtype(), t.shapeRef(), from, to, gen));
    }

    static Tensor normal(Tensor t, double mean, double std, Generator gen) {
        check(t);
        return fillFrom(t, RandomFill.normal(t.dtype(), t.shapeRef(), mean, std, gen));
    }
}
