package dev.ferry.tensor.internal.kernels;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Storage;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.internal.Shapes;

/**
 * {@code out = a op b} with broadcasting. {@code a} and {@code b} must have the same dtype; so must
 * {@code out}, except for comparisons, where it is bool. {@code out} has the broadcast shape and
 * may be one of the inputs (in-place ops) as long as it is not itself broadcast.
 */
public final class BinaryKernels {
    private BinaryKernels() {
    }

    /** {@code out = a + alpha * b} for ADD; {@code alpha} is ignored by other ops. */
    public static void run(BinaryOp op, Tensor a, Tensor b, Tensor out, double alpha) {
        int[] shape = out.shape();
        int[] sa = Shapes.broadcastStrides(a.shape(), a.strides(), shape);
        int[] sb = Shapes.broadcastStrides(b.shape(), b.strides(), shape);
        int[] so = out.strides();
        int oa = a.storageOffset();
        int ob = b.storageOffset();
        int oo = out.storageOffset();
        DType dt = a.dtype();
        if (op.isComparison()) {
            compare(op, a.storage(), b.storage(), (boolean[]) out.storage().array(), shape, sa, oa, sb, ob, so, oo);
        } else if (dt == DType.FLOAT32) {
            StridedLoop.run(shape, sa, oa, sb, ob, so, oo,
                    f32(op, (float[]) a.storage().array(), (float[]) b.storage().array(),
                            (float[]) out.storage().array(), (float) alpha));
        } else if (dt == DType.FLOAT64) {
            StridedLoop.run(shape, sa, oa, sb, ob, so, oo,
                    f64(op, (double[]) a.storage().array(), (double[]) b.storage().array(),
                            (double[]) out.storage().array(), alpha));
        } else {
            Storage x = a.storage();
            Storage y = b.storage();
            Storage z = out.storage();
            long al = (long) alpha;
            StridedLoop.run(shape, sa, oa, sb, ob, so, oo, (n, ia, s1, ib, s2, io, s3) -> {
                for (int i = 0; i < n; i++, ia += s1, ib += s2, io += s3) {
                    long bv = y.getLong(ib);
                    z.setLong(io, op.apply(x.getLong(ia), op == BinaryOp.ADD ? al * bv : bv));
                }
            });
        }
    }

    // The hot ops get a dense path (unit strides, or a broadcast scalar b) that the JIT can
    // vectorize; everything else runs the general strided loop.

    private static StridedLoop.Loop3 f32(BinaryOp op, float[] a, float[] b, float[] o, float alpha) {
        return switch (op) {
            case ADD -> (n, ia, sa, ib, sb, io, so) -> {
                if (sa == 1 && sb == 1 && so == 1) {
                    addDense(a, ia, b, ib, o, io, alpha, n);
                } else if (sa == 1 && sb == 0 && so == 1) {
                    addScalarDense(a, ia, alpha * b[ib], o, io, n);
                } else {
                    for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                        o[io] = a[ia] + alpha * b[ib];
                    }
                }
            };
            case SUB -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = a[ia] - b[ib];
                }
            };
            case MUL -> (n, ia, sa, ib, sb, io, so) -> {
                if (sa == 1 && sb == 1 && so == 1) {
                    mulDense(a, ia, b, ib, o, io, n);
                } else if (sa == 1 && sb == 0 && so == 1) {
                    mulScalarDense(a, ia, b[ib], o, io, n);
                } else {
                    for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                        o[io] = a[ia] * b[ib];
                    }
                }
            };
            case DIV -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = a[ia] / b[ib];
                }
            };
            default -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = (float) op.apply(a[ia], b[ib]);
                }
            };
        };
    }

    // Dense loops as static methods. With one shared index (the usual case: equal offsets) the JIT
    // vectorizes even when the arrays may be the same; with distinct offsets it must assume overlap.
    private static void addDense(float[] a, int ia, float[] b, int ib, float[] o, int io, float alpha, int n) {
        if (ia == ib && ib == io) {
            for (int j = io; j < io + n; j++) {
                o[j] = a[j] + alpha * b[j];
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            o[io + i] = a[ia + i] + alpha * b[ib + i];
        }
    }

    private static void mulDense(float[] a, int ia, float[] b, int ib, float[] o, int io, int n) {
        if (ia == ib && ib == io) {
            for (int j = io; j < io + n; j++) {
                o[j] = a[j] * b[j];
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            o[io + i] = a[ia + i] * b[ib + i];
        }
    }

    private static void addScalarDense(float[] a, int ia, float bv, float[] o, int io, int n) {
        if (ia == io) {
            for (int j = io; j < io + n; j++) {
                o[j] = a[j] + bv;
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            o[io + i] = a[ia + i] + bv;
        }
    }

    private static void mulScalarDense(float[] a, int ia, float bv, float[] o, int io, int n) {
        if (ia == io) {
            for (int j = io; j < io + n; j++) {
                o[j] = a[j] * bv;
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            o[io + i] = a[ia + i] * bv;
        }
    }

    private static StridedLoop.Loop3 f64(BinaryOp op, double[] a, double[] b, double[] o, double alpha) {
        return switch (op) {
            case ADD -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = a[ia] + alpha * b[ib];
                }
            };
            case SUB -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = a[ia] - b[ib];
                }
            };
            case MUL -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = a[ia] * b[ib];
                }
            };
            case DIV -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = a[ia] / b[ib];
                }
            };
            default -> (n, ia, sa, ib, sb, io, so) -> {
                for (int i = 0; i < n; i++, ia += sa, ib += sb, io += so) {
                    o[io] = op.apply(a[ia], b[ib]);
                }
            };
        };
    }

    private static void compare(BinaryOp op, Storage x, Storage y, boolean[] o, int[] shape,
                                int[] sa, int oa, int[] sb, int ob, int[] so, int oo) {
        boolean integral = !x.dtype().isFloatingPoint();
        StridedLoop.run(shape, sa, oa, sb, ob, so, oo, (n, ia, s1, ib, s2, io, s3) -> {
            for (int i = 0; i < n; i++, ia += s1, ib += s2, io += s3) {
                o[io] = integral ? op.test(x.getLong(ia), y.getLong(ib)) : op.test(x.getDouble(ia), y.getDouble(ib));
            }
        });
    }
}
