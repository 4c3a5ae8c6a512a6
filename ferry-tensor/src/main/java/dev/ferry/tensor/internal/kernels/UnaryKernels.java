package dev.ferry.tensor.internal.kernels;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Storage;
import dev.ferry.tensor.Tensor;

/** {@code out = op(a)}; {@code out} has a's shape and dtype and may be {@code a} itself. */
public final class UnaryKernels {
    private UnaryKernels() {
    }

    /** Branch-free and with one shared index, so the JIT vectorizes it. */
    private static void reluDense(float[] x, float[] o, int off, int n) {
        for (int j = off; j < off + n; j++) {
            o[j] = Math.max(x[j], 0f);
        }
    }

    public static void run(UnaryOp op, Tensor a, Tensor out) {
        int[] shape = a.shape();
        int[] sa = a.strides();
        int[] so = out.strides();
        int oa = a.storageOffset();
        int oo = out.storageOffset();
        if (a.dtype() == DType.FLOAT32) {
            float[] x = (float[]) a.storage().array();
            float[] o = (float[]) out.storage().array();
            StridedLoop.run(shape, sa, oa, so, oo, switch (op) {
                case RELU -> (n, ia, s1, io, s2) -> {
                    if (s1 == 1 && s2 == 1 && ia == io) {
                        reluDense(x, o, io, n);
                        return;
                    }
                    for (int i = 0; i < n; i++, ia += s1, io += s2) {
                        o[io] = Math.max(x[ia], 0f); // NaN stays NaN, -0 becomes 0
                    }
                };
                case NEG -> (n, ia, s1, io, s2) -> {
                    for (int i = 0; i < n; i++, ia += s1, io += s2) {
                        o[io] = -x[ia];
                    }
                };
                default -> (n, ia, s1, io, s2) -> {
                    for (int i = 0; i < n; i++, ia += s1, io += s2) {
                        o[io] = (float) op.fn.applyAsDouble(x[ia]);
                    }
                };
            });
        } else if (a.dtype() == DType.FLOAT64) {
            double[] x = (double[]) a.storage().array();
            double[] o = (double[]) out.storage().array();
            StridedLoop.run(shape, sa, oa, so, oo, (n, ia, s1, io, s2) -> {
                for (int i = 0; i < n; i++, ia += s1, io += s2) {
                    o[io] = op.fn.applyAsDouble(x[ia]);
                }
            });
        } else {
            Storage x = a.storage();
            Storage o = out.storage();
            StridedLoop.run(shape, sa, oa, so, oo, (n, ia, s1, io, s2) -> {
                for (int i = 0; i < n; i++, ia += s1, io += s2) {
                    o.setLong(io, op.apply(x.getLong(ia)));
                }
            });
        }
    }
}
