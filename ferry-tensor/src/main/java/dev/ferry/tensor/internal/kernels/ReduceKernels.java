package dev.ferry.tensor.internal.kernels;

import dev.ferry.tensor.DType;
import dev.ferry.tensor.Storage;
import dev.ferry.tensor.Tensor;

/**
 * Reductions over a set of dims into a contiguous output whose elements are the kept positions in
 * row-major order. Floating sums and products accumulate in double; integer ones in long.
 */
public final class ReduceKernels {
    private ReduceKernels() {
    }

    public enum Kind { SUM, PROD, MAX, MIN }

    /** Kept and reduced parts of a tensor's layout. */
    private record Split(int[] keptShape, int[] keptStrides, int[] redShape, int[] redStrides) {
        static Split of(Tensor in, boolean[] reduced) {
            int[] shape = in.shape();
            int[] strides = in.strides();
            int nk = 0;
            for (boolean r : reduced) {
                nk += r ? 0 : 1;
            }
            int[] ks = new int[nk];
            int[] kst = new int[nk];
            int[] rs = new int[shape.length - nk];
            int[] rst = new int[shape.length - nk];
            for (int d = 0, i = 0, j = 0; d < shape.length; d++) {
                if (reduced[d]) {
                    rs[j] = shape[d];
                    rst[j++] = strides[d];
                } else {
                    ks[i] = shape[d];
                    kst[i++] = strides[d];
                }
            }
            return new Split(ks, kst, rs, rst);
        }
    }

    /** Reduces {@code in} over the dims flagged in {@code reduced} into contiguous {@code out}. */
    public static void reduce(Kind kind, Tensor in, boolean[] reduced, Tensor out) {
        if (kind == Kind.SUM && in.dtype() == DType.FLOAT32 && in.isContiguous() && isPrefix(reduced)) {
            sumLeadingDims(in, reduced, out);
            return;
        }
        Split s = Split.of(in, reduced);
        Storage src = in.storage();
        Storage dst = out.storage();
        boolean integral = !in.dtype().isFloatingPoint();
        int[] outStrides = dev.ferry.tensor.internal.Shapes.contiguousStrides(s.keptShape);
        int[] counter = new int[s.redShape.length];
        StridedLoop.run(s.keptShape, s.keptStrides, in.storageOffset(), outStrides, out.storageOffset(),
                (n, ia, sa, io, so) -> {
                    for (int i = 0; i < n; i++, ia += sa, io += so) {
                        if (integral) {
                            dst.setLong(io, reduceLong(kind, src, ia, s.redShape, s.redStrides, counter));
                        } else {
                            dst.setDouble(io, reduceDouble(kind, src, ia, s.redShape, s.redStrides, counter));
                        }
                    }
                });
    }

    private static boolean isPrefix(boolean[] reduced) {
        int k = 0;
        while (k < reduced.length && reduced[k]) {
            k++;
        }
        for (int d = k; d < reduced.length; d++) {
            if (reduced[d]) {
                return false;
            }
        }
        return k > 0 && k < reduced.length;
    }

    /** Column sums of a dense [rows, cols] block (e.g. a bias gradient), row by row so it vectorizes. */
    private static void sumLeadingDims(Tensor in, boolean[] reduced, Tensor out) {
        int[] shape = in.shape();
        int rows = 1;
        for (int d = 0; d < reduced.length && reduced[d]; d++) {
            rows *= shape[d];
        }
        int cols = in.numel() / Math.max(rows, 1);
        float[] a = (float[]) in.storage().array();
        double[] acc = new double[cols];
        for (int r = 0, base = in.storageOffset(); r < rows; r++, base += cols) {
            for (int c = 0; c < cols; c++) {
                acc[c] += a[base + c];
            }
        }
        float[] o = (float[]) out.storage().array();
        for (int c = 0; c < cols; c++) {
            o[out.storageOffset() + c] = (float) acc[c];
        }
    }

    private static double reduceDouble(Kind kind, Storage src, int base, int[] shape, int[] strides, int[] counter) {
        double acc = switch (kind) {
            case SUM -> 0;
            case PROD -> 1;
            case MAX -> Double.NEGATIVE_INFINITY;
            case MIN -> Double.POSITIVE_INFINITY;
        };
        int total = 1;
        for (int s : shape) {
            total *= s;
        }
        if (shape.length == 1 && kind == Kind.SUM && src.dtype() == DType.FLOAT32) {
            float[] a = (float[]) src.array();
            int st = strides[0];
            for (int i = 0, o = base; i < total; i++, o += st) {
                acc += a[o];
            }
            return acc;
        }
        java.util.Arrays.fill(counter, 0);
        int off = base;
        for (int i = 0; i < total; i++) {
            double v = src.getDouble(off);
            acc = switch (kind) {
                case SUM -> acc + v;
                case PROD -> acc * v;
                case MAX -> v > acc || Double.isNaN(v) || Double.isNaN(acc) ? (Double.isNaN(acc) ? acc : v) : acc;
                case MIN -> v < acc || Double.isNaN(v) || Double.isNaN(acc) ? (Double.isNaN(acc) ? acc : v) : acc;
            };
            off = advance(off, shape, strides, counter);
        }
        return acc;
    }

    private static long reduceLong(Kind kind, Storage src, int base, int[] shape, int[] strides, int[] counter) {
        long acc = switch (kind) {
            case SUM -> 0;
            case PROD -> 1;
            case MAX -> Long.MIN_VALUE;
            case MIN -> Long.MAX_VALUE;
        };
        int total = 1;
        for (int s : shape) {
            total *= s;
        }
        java.util.Arrays.fill(counter, 0);
        int off = base;
        for (int i = 0; i < total; i++) {
            long v = src.getLong(off);
            acc = switch (kind) {
                case SUM -> acc + v;
                case PROD -> acc * v;
                case MAX -> Math.max(acc, v);
                case MIN -> Math.min(acc, v);
            };
            off = advance(off, shape, strides, counter);
        }
        return acc;
    }

    /** Odometer step over {@code shape}; returns the next element's offset. */
    private static int advance(int off, int[] shape, int[] strides, int[] counter) {
        for (int d = shape.length - 1; d >= 0; d--) {
            off += strides[d];
            if (++counter[d] < shape[d]) {
                return off;
            }
            off -= strides[d] * shape[d];
            counter[d] = 0;
        }
        return off;
    }

    /**
     * Max (or min) along one dim with the index of its first occurrence; NaN wins, as in PyTorch.
     * {@code values} and {@code indices} are contiguous with the dim removed.
     */
    public static void argReduce(Tensor in, int dim, boolean max, Tensor values, Tensor indices) {
        boolean[] reduced = new boolean[in.dim()];
        reduced[dim] = true;
        Split s = Split.of(in, reduced);
        Storage src = in.storage();
        Storage vals = values.storage();
        long[] idx = (long[]) indices.storage().array();
        int len = in.size(dim);
        int step = in.stride(dim);
        boolean integral = !in.dtype().isFloatingPoint();
        int[] outStrides = dev.ferry.tensor.internal.Shapes.contiguousStrides(s.keptShape);
        StridedLoop.run(s.keptShape, s.keptStrides, in.storageOffset(), outStrides, 0, (n, ia, sa, io, so) -> {
            for (int i = 0; i < n; i++, ia += sa, io += so) {
                int best = 0;
                if (integral) {
                    long bv = src.getLong(ia);
                    for (int j = 1; j < len; j++) {
                        long v = src.getLong(ia + j * step);
                        if (max ? v > bv : v < bv) {
                            bv = v;
                            best = j;
                        }
                    }
                    vals.setLong(values.storageOffset() + io, bv);
                } else {
                    double bv = src.getDouble(ia);
                    for (int j = 1; j < len && !Double.isNaN(bv); j++) {
                        double v = src.getDouble(ia + j * step);
                        if (Double.isNaN(v) || (max ? v > bv : v < bv)) {
                            bv = v;
                            best = j;
                        }
                    }
                    vals.setDouble(values.storageOffset() + io, bv);
                }
                idx[indices.storageOffset() + io] = best;
            }
        });
    }

    /**
     * Softmax or log-softmax along {@code dim} into {@code out} (same shape, any strides), in the
     * input's floating dtype, subtracting the row maximum for stability.
     */
    public static void softmax(Tensor in, int dim, boolean log, Tensor out) {
        int[] shape = in.shape();
        int len = shape[dim];
        int sIn = in.stride(dim);
        int sOut = out.stride(dim);
        shape[dim] = 1;
        Storage src = in.storage();
        Storage dst = out.storage();
        double[] row = new double[len];
        StridedLoop.run(shape, in.strides(), in.storageOffset(), out.strides(), out.storageOffset(),
                (n, ia, sa, io, so) -> {
                    for (int i = 0; i < n; i++, ia += sa, io += so) {
                        double m = Double.NEGATIVE_INFINITY;
                        for (int j = 0; j < len; j++) {
                            row[j] = src.getDouble(ia + j * sIn);
                            m = Math.max(m, row[j]);
                        }
                        if (Double.isInfinite(m)) {
                            m = 0;
                        }
                        double sum = 0;
                        for (int j = 0; j < len; j++) {
                            sum += Math.exp(row[j] - m);
                        }
                        double logSum = Math.log(sum);
                        for (int j = 0; j < len; j++) {
                            double v = log ? row[j] - m - logSum : Math.exp(row[j] - m) / sum;
                            dst.setDouble(io + j * sOut, v);
                        }
                    }
                });
    }
}
