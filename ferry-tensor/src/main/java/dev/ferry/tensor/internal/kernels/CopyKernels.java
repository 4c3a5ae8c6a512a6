package dev.ferry.tensor.internal.kernels;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Storage;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.internal.Shapes;

/** Strided copies with broadcasting and dtype conversion, and fills. */
public final class CopyKernels {
    private CopyKernels() {
    }

    /** {@code dst[...] = (dst dtype) src[...]}, with {@code src} broadcast to {@code dst}'s shape. */
    public static void copy(Tensor src, Tensor dst) {
        int[] shape = dst.shape();
        int[] ss = Shapes.broadcastStrides(src.shape(), src.strides(), shape);
        int[] sd = dst.strides();
        int os = src.storageOffset();
        int od = dst.storageOffset();
        DType from = src.dtype();
        DType to = dst.dtype();
        if (from == DType.FLOAT32 && to == DType.FLOAT32) {
            float[] x = (float[]) src.storage().array();
            float[] y = (float[]) dst.storage().array();
            StridedLoop.run(shape, ss, os, sd, od, (n, i0, s0, i1, s1) -> {
                if (s0 == 1 && s1 == 1) {
                    System.arraycopy(x, i0, y, i1, n);
                    return;
                }
                for (int i = 0; i < n; i++, i0 += s0, i1 += s1) {
                    y[i1] = x[i0];
                }
            });
        } else if (from == DType.FLOAT64 && to == DType.FLOAT64) {
            double[] x = (double[]) src.storage().array();
            double[] y = (double[]) dst.storage().array();
            StridedLoop.run(shape, ss, os, sd, od, (n, i0, s0, i1, s1) -> {
                for (int i = 0; i < n; i++, i0 += s0, i1 += s1) {
                    y[i1] = x[i0];
                }
            });
        } else if (from == DType.FLOAT32 && to == DType.FLOAT64) {
            float[] x = (float[]) src.storage().array();
            double[] y = (double[]) dst.storage().array();
            StridedLoop.run(shape, ss, os, sd, od, (n, i0, s0, i1, s1) -> {
                for (int i = 0; i < n; i++, i0 += s0, i1 += s1) {
                    y[i1] = x[i0];
                }
            });
        } else {
            Storage x = src.storage();
            Storage y = dst.storage();
            boolean viaLong = !from.isFloatingPoint() && !to.isFloatingPoint();
            StridedLoop.run(shape, ss, os, sd, od, (n, i0, s0, i1, s1) -> {
                for (int i = 0; i < n; i++, i0 += s0, i1 += s1) {
                    if (viaLong) {
                        y.setLong(i1, x.getLong(i0));
                    } else {
                        y.setDouble(i1, x.getDouble(i0));
                    }
                }
            });
        }
    }

    /** Sets every element of {@code dst} to {@code value}. */
    public static void fill(Tensor dst, double value) {
        Storage y = dst.storage();
        if (dst.dtype() == DType.FLOAT32) {
            float[] a = (float[]) y.array();
            float v = (float) value;
            StridedLoop.run(dst.shape(), dst.strides(), dst.storageOffset(), (n, i0, s0) -> {
                for (int i = 0; i < n; i++, i0 += s0) {
                    a[i0] = v;
                }
            });
        } else {
            StridedLoop.run(dst.shape(), dst.strides(), dst.storageOffset(), (n, i0, s0) -> {
                for (int i = 0; i < n; i++, i0 += s0) {
                    y.setDouble(i0, value);
                }
            });
        }
    }
}
