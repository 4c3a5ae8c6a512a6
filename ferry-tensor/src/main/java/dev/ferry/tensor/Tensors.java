package dev.ferry.tensor;

import dev.ferry.tensor.internal.Shapes;
import dev.ferry.tensor.internal.kernels.CopyKernels;

import java.util.List;

/**
 * Factories and multi-tensor ops, the counterpart of the {@code torch.*} namespace.
 *
 * <pre>
 * Tensor a = Tensors.of(new float[][] {{1, 2}, {3, 4}});   // float32 [2, 2]
 * Tensor b = Tensors.zeros(2, 3);                           // float32
 * Tensor i = Tensors.arange(5);                             // int64 [0, 1, 2, 3, 4]
 * Generator g = new Generator(0);
 * Tensor r = Tensors.randn(g, 64, 256);                     // same values as torch.randn with seed 0
 * </pre>
 *
 * <p>The element type follows the Java type of the data ({@code float} → float32, {@code double}
 * → float64, {@code long} → int64, {@code int} → int32, {@code boolean} → bool); shape-only
 * factories make float32 unless a {@link DType} is given.
 */
public final class Tensors {
    private Tensors() {
    }

    // ------------------------------------------------------------------ from data (always copied)

    public static Tensor of(float... values) {
        return from(values.clone(), values.length);
    }

    public static Tensor of(double... values) {
        return from(values.clone(), values.length);
    }

    public static Tensor of(long... values) {
        return from(values.clone(), values.length);
    }

    public static Tensor of(int... values) {
        return from(values.clone(), values.length);
    }

    public static Tensor of(boolean... values) {
        return from(values.clone(), values.length);
    }

    public static Tensor of(float[][] rows) {
        int cols = rows.length == 0 ? 0 : rows[0].length;
        float[] flat = new float[rows.length * cols];
        for (int i = 0; i < rows.length; i++) {
            checkRow(rows[i].length, cols, i);
            System.arraycopy(rows[i], 0, flat, i * cols, cols);
        }
        return from(flat, rows.length, cols);
    }

    public static Tensor of(double[][] rows) {
        int cols = rows.length == 0 ? 0 : rows[0].length;
        double[] flat = new double[rows.length * cols];
        for (int i = 0; i < rows.length; i++) {
            checkRow(rows[i].length, cols, i);
            System.arraycopy(rows[i], 0, flat, i * cols, cols);
        }
        return from(flat, rows.length, cols);
    }

    public static Tensor of(long[][] rows) {
        int cols = rows.length == 0 ? 0 : rows[0].length;
        long[] flat = new long[rows.length * cols];
        for (int i = 0; i < rows.length; i++) {
            checkRow(rows[i].length, cols, i);
            System.arraycopy(rows[i], 0, flat, i * cols, cols);
        }
        return from(flat, rows.length, cols);
    }

    private static void checkRow(int length, int cols, int i) {
        if (length != cols) {
            throw new IllegalArgumentException("expected sequence of length " + cols + " at dim 1 (got " + length
                    + " in row " + i + ")");
        }
    }

    /**
     * Wraps a flat primitive array (row-major, not copied) as a tensor of {@code shape}. The
     * tensor and the array share memory.
     */
    public static Tensor from(Object array, int... shape) {
        Storage storage = Storage.wrap(array);
        Shapes.checkShape(shape);
        if (Shapes.numel(shape) != storage.size()) {
            throw new IllegalArgumentException("shape " + Shapes.str(shape) + " needs " + Shapes.numel(shape)
                    + " elements but the array has " + storage.size());
        }
        return new Tensor(storage, 0, shape.clone(), Shapes.contiguousStrides(shape));
    }

    /** A view of {@code storage} with the given layout (as {@code torch.as_strided}); no copy. */
    public static Tensor asStrided(Storage storage, int[] shape, int[] strides, int offset) {
        Shapes.checkShape(shape);
        if (shape.length != strides.length) {
            throw new IllegalArgumentException("mismatch in length of strides and shape");
        }
        long last = offset;
        for (int i = 0; i < shape.length; i++) {
            if (strides[i] < 0) {
                throw new IllegalArgumentException("as_strided: Negative strides are not supported at the moment, got"
                        + " strides: " + Shapes.str(strides));
            }
            last += (long) Math.max(0, shape[i] - 1) * strides[i];
        }
        if (offset < 0 || (Shapes.numel(shape) > 0 && last >= storage.size())) {
            throw new IllegalArgumentException("setStorage: sizes " + Shapes.str(shape) + ", strides "
                    + Shapes.str(strides) + ", storage offset " + offset + " require a storage of at least "
                    + (last + 1) + " elements, but the storage has " + storage.size());
        }
        return new Tensor(storage, offset, shape.clone(), strides.clone());
    }

    /** A 0-dim float32 tensor. */
    public static Tensor scalar(double value) {
        return scalar(value, DType.FLOAT32);
    }

    public static Tensor scalar(double value, DType dtype) {
        Tensor t = Tensor.allocate(dtype, new int[0]);
        t.storage().setDouble(0, value);
        return t;
    }

    // ------------------------------------------------------------------ filled

    public static Tensor zeros(int... shape) {
        return Tensor.allocate(DType.FLOAT32, shape);
    }

    public static Tensor zeros(DType dtype, int... shape) {
        return Tensor.allocate(dtype, shape);
    }

    public static Tensor ones(int... shape) {
        return full(1, DType.FLOAT32, shape);
    }

    public static Tensor ones(DType dtype, int... shape) {
        return full(1, dtype, shape);
    }

    public static Tensor full(double value, int... shape) {
        return full(value, DType.FLOAT32, shape);
    }

    public static Tensor full(double value, DType dtype, int... shape) {
        Tensor t = Tensor.allocate(dtype, shape);
        if (value != 0) {
            CopyKernels.fill(t, value);
        }
        return t;
    }

    /** Uninitialised in PyTorch; here zero-filled (the JVM clears memory anyway). */
    public static Tensor empty(DType dtype, int... shape) {
        return Tensor.allocate(dtype, shape);
    }

    public static Tensor zerosLike(Tensor t) {
        return Tensor.allocate(t.dtype(), t.shapeRef());
    }

    public static Tensor onesLike(Tensor t) {
        return full(1, t.dtype(), t.shapeRef());
    }

    public static Tensor fullLike(Tensor t, double value) {
        return full(value, t.dtype(), t.shapeRef());
    }

    /** The n×n identity matrix (float32). */
    public static Tensor eye(int n) {
        return eye(n, n, DType.FLOAT32);
    }

    /** An n×m matrix with ones on the main diagonal, as {@code torch.eye(n, m, dtype=...)}. */
    public static Tensor eye(int n, int m, DType dtype) {
        Tensor t = zeros(dtype, n, m);
        for (int i = 0; i < Math.min(n, m); i++) {
            t.storage().setDouble(i * m + i, 1);
        }
        return t;
    }

    /** {@code [0, 1, ..., end-1]} as int64. */
    public static Tensor arange(long end) {
        return arange(0, end, 1);
    }

    /** {@code start, start+step, ...} below {@code end}, as int64. */
    public static Tensor arange(long start, long end, long step) {
        if (step == 0) {
            throw new IllegalArgumentException("step must be nonzero");
        }
        int n = (int) Math.max(0, (end - start + step + (step > 0 ? -1 : 1)) / step);
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
            v[i] = start + i * step;
        }
        return from(v, n);
    }

    /** {@code start, start+step, ...} below {@code end}, as float32. */
    public static Tensor arange(double start, double end, double step) {
        if (step == 0) {
            throw new IllegalArgumentException("step must be nonzero");
        }
        int n = (int) Math.max(0, Math.ceil((end - start) / step));
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (start + i * step);
        }
        return from(v, n);
    }

    /** {@code steps} evenly spaced float32 values from start to end inclusive. */
    public static Tensor linspace(double start, double end, int steps) {
        if (steps < 0) {
            throw new IllegalArgumentException("number of steps must be non-negative");
        }
        float[] v = new float[steps];
        double step = steps > 1 ? (end - start) / (steps - 1) : 0;
        int half = steps / 2;
        for (int i = 0; i < steps; i++) {
            // PyTorch fills the second half backwards from the end for symmetry.
            v[i] = (float) (i < half ? start + step * i : end - step * (steps - 1 - i));
        }
        return from(v, steps);
    }

    // ------------------------------------------------------------------ random

    /** Uniform [0, 1) float32 from the default generator. */
    public static Tensor rand(int... shape) {
        return rand(Generator.defaultGenerator(), shape);
    }

    public static Tensor rand(Generator generator, int... shape) {
        return RandomFill.uniform(DType.FLOAT32, shape, 0, 1, generator);
    }

    public static Tensor rand(Generator generator, DType dtype, int... shape) {
        return RandomFill.uniform(dtype, shape, 0, 1, generator);
    }

    /** Standard normal float32 from the default generator. */
    public static Tensor randn(int... shape) {
        return randn(Generator.defaultGenerator(), shape);
    }

    public static Tensor randn(Generator generator, int... shape) {
        return RandomFill.normal(DType.FLOAT32, shape, 0, 1, generator);
    }

    public static Tensor randn(Generator generator, DType dtype, int... shape) {
        return RandomFill.normal(dtype, shape, 0, 1, generator);
    }

    /** int64 values uniform in [low, high). */
    public static Tensor randint(long low, long high, Generator generator, int... shape) {
        return RandomFill.randint(low, high, shape, DType.INT64, generator);
    }

    /** Sets the default generator's seed (as {@code torch.manual_seed}). */
    public static void manualSeed(long seed) {
        Generator.defaultGenerator().manualSeed(seed);
    }

    // ------------------------------------------------------------------ multi-tensor ops

    /** Concatenates along an existing dim. Differentiable. */
    public static Tensor cat(List<Tensor> tensors, int dim) {
        return ShapeOps.cat(tensors, dim);
    }

    /** Stacks along a new dim. Differentiable. */
    public static Tensor stack(List<Tensor> tensors, int dim) {
        return ShapeOps.stack(tensors, dim);
    }

    /** {@code condition ? a : b} element-wise, with broadcasting. Differentiable in a and b. */
    public static Tensor where(Tensor condition, Tensor a, Tensor b) {
        return Elementwise.where(condition, a, b);
    }

    /**
     * {@code x · weightᵀ + bias} (bias may be null), nn.Linear's op; one BLAS call for the
     * product and bias together. Differentiable.
     */
    public static Tensor linear(Tensor x, Tensor weight, Tensor bias) {
        return Linalg.linear(x, weight, bias);
    }

    /** Name of the BLAS implementation doing matrix products (e.g. {@code JNIBLAS} when native). */
    public static String blasBackend() {
        return dev.ferry.tensor.internal.kernels.Gemm.backend();
    }
}
