package dev.ferry.tensor;

import dev.ferry.tensor.internal.Shapes;

/**
 * Random tensors, generated in row-major order with PyTorch's CPU algorithms, so that the same
 * seed gives the same values as PyTorch.
 */
final class RandomFill {
    private RandomFill() {
    }

    private static void requireFloating(DType dtype, String what) {
        if (!dtype.isFloatingPoint()) {
            throw new IllegalArgumentException(what + " is only implemented for floating types, got " + dtype);
        }
    }

    static Tensor uniform(DType dtype, int[] shape, double from, double to, Generator gen) {
        requireFloating(dtype, "uniform");
        if (!(from <= to)) {
            throw new IllegalArgumentException("uniform_ expects to return a [from, to) range, but found from=" + from
                    + " > to=" + to);
        }
        Tensor out = Tensor.allocate(dtype, shape);
        int n = out.numel();
        if (dtype == DType.FLOAT32) {
            float[] a = (float[]) out.storage().array();
            float f = (float) from;
            // As PyTorch: bounds and their difference in float, the affine map in double (its
            // dist_acctype<float>), one rounding at the end. All-float arithmetic is off by
            // several ulps whenever the bound is not a power of two.
            float range = (float) to - f;
            for (int i = 0; i < n; i++) {
                a[i] = (float) ((double) gen.nextFloat() * range + f);
            }
        } else {
            double[] a = (double[]) out.storage().array();
            for (int i = 0; i < n; i++) {
                a[i] = gen.nextDouble() * (to - from) + from;
            }
        }
        return out;
    }

    static Tensor normal(DType dtype, int[] shape, double mean, double std, Generator gen) {
        requireFloating(dtype, "normal");
        if (std < 0) {
            throw new IllegalArgumentException("normal expects std >= 0.0, but found std " + std);
        }
        Tensor out = Tensor.allocate(dtype, shape);
        int n = out.numel();
        Storage s = out.storage();
        if (n < 16) {
            for (int i = 0; i < n; i++) {
                s.setDouble(i, gen.nextGaussian() * std + mean);
            }
            return out;
        }
        // PyTorch's normal_fill: uniforms first, then Box-Muller on blocks of 16 (pairs j, j+8).
        double[] u = new double[n];
        for (int i = 0; i < n; i++) {
            u[i] = dtype == DType.FLOAT32 ? gen.nextFloat() : gen.nextDouble();
        }
        for (int i = 0; i + 16 <= n; i += 16) {
            boxMuller16(u, i, mean, std, dtype);
        }
        if (n % 16 != 0) {
            int start = n - 16;
            for (int i = start; i < n; i++) {
                u[i] = dtype == DType.FLOAT32 ? gen.nextFloat() : gen.nextDouble();
            }
            boxMuller16(u, start, mean, std, dtype);
        }
        for (int i = 0; i < n; i++) {
            s.setDouble(i, u[i]);
        }
        return out;
    }

    private static void boxMuller16(double[] d, int off, double mean, double std, DType dtype) {
        for (int j = 0; j < 8; j++) {
            double u1 = 1 - d[off + j];
            double u2 = d[off + j + 8];
            double radius = Math.sqrt(-2 * Math.log(u1));
            double theta = 2.0 * Math.PI * u2;
            double a = radius * Math.cos(theta) * std + mean;
            double b = radius * Math.sin(theta) * std + mean;
            d[off + j] = dtype == DType.FLOAT32 ? (float) a : a;
            d[off + j + 8] = dtype == DType.FLOAT32 ? (float) b : b;
        }
    }

    /** Integers uniform in [low, high). */
    static Tensor randint(long low, long high, int[] shape, DType dtype, Generator gen) {
        if (low >= high) {
            throw new IllegalArgumentException("random_ expects 'from' to be less than 'to', but got from=" + low
                    + " >= to=" + high);
        }
        Tensor out = Tensor.allocate(dtype, shape);
        Storage s = out.storage();
        long range = high - low;
        int n = Shapes.numel(shape);
        for (int i = 0; i < n; i++) {
            long v = Long.compareUnsigned(range, 1L << 32) >= 0
                    ? Long.remainderUnsigned(gen.random64(), range)
                    : gen.random32() % range;
            s.setLong(i, v + low);
        }
        return out;
    }
}
