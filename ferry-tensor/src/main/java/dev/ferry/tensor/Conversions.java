package dev.ferry.tensor;

import dev.ferry.tensor.internal.kernels.CopyKernels;

/** Copies and dtype conversions. */
final class Conversions {
    private Conversions() {
    }

    /** A new contiguous tensor with {@code t}'s elements converted to {@code dtype} (not recorded). */
    static Tensor contiguousCopy(Tensor t, DType dtype) {
        Tensor out = Tensor.allocate(dtype, t.shapeRef());
        CopyKernels.copy(t, out);
        return out;
    }

    static Tensor to(Tensor t, DType dtype) {
        if (t.dtype() == dtype) {
            return t;
        }
        Tensor out = contiguousCopy(t, dtype);
        if (!dtype.isFloatingPoint()) {
            return out;
        }
        DType from = t.dtype();
        return Grad.of("ToCopyBackward0", t).record(out, g -> new Tensor[] {g.to(from)});
    }

    static Tensor cloneTensor(Tensor t) {
        Tensor out = contiguousCopy(t, t.dtype());
        return Grad.of("CloneBackward0", t).record(out, g -> new Tensor[] {g});
    }
}
