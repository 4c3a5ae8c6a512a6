package dev.ferry.tensor;

import java.util.Objects;

/**
 * The flat, typed memory behind one or more tensors. A tensor is a view on a storage: an offset,
 * a shape and strides. Views ({@link Tensor#view}, {@link Tensor#transpose}, ...) share it.
 *
 * <p>The backing array is exposed ({@link #array()}) for transports and kernels that need the raw
 * elements without a copy: it is a {@code float[]}, {@code double[]}, {@code long[]}, {@code int[]}
 * or {@code boolean[]} according to {@link #dtype()}. Writing to it directly bypasses autograd's
 * in-place checks; call {@link #bumpVersion()} after doing so.
 *
 * <p>Not thread-safe: concurrent writers must synchronize externally, like PyTorch tensors.
 */
public final class Storage {
    private final DType dtype;
    private final Object array;
    private final int size;
    private int version;

    private Storage(DType dtype, Object array, int size) {
        this.dtype = dtype;
        this.array = array;
        this.size = size;
    }

    /** A zero-filled storage of {@code size} elements. */
    public static Storage allocate(DType dtype, int size) {
        if (size < 0) {
            throw new IllegalArgumentException("negative storage size " + size);
        }
        Object array = switch (dtype) {
            case FLOAT32 -> new float[size];
            case FLOAT64 -> new double[size];
            case INT64 -> new long[size];
            case INT32 -> new int[size];
            case BOOL -> new boolean[size];
        };
        return new Storage(dtype, array, size);
    }

    /** Wraps (does not copy) a primitive array; its type decides the dtype. */
    public static Storage wrap(Object array) {
        Objects.requireNonNull(array, "array");
        if (array instanceof float[] a) {
            return new Storage(DType.FLOAT32, a, a.length);
        } else if (array instanceof double[] a) {
            return new Storage(DType.FLOAT64, a, a.length);
        } else if (array instanceof long[] a) {
            return new Storage(DType.INT64, a, a.length);
        } else if (array instanceof int[] a) {
            return new Storage(DType.INT32, a, a.length);
        } else if (array instanceof boolean[] a) {
            return new Storage(DType.BOOL, a, a.length);
        }
        throw new IllegalArgumentException("unsupported array type " + array.getClass().getSimpleName()
                + " (expected float[], double[], long[], int[] or boolean[])");
    }

    public DType dtype() {
        return dtype;
    }

    /** Number of elements. */
    public int size() {
        return size;
    }

    /** The backing primitive array (not a copy). */
    public Object array() {
        return array;
    }

    /**
     * A counter bumped by every in-place write through the tensor API; autograd uses it to detect
     * that a tensor saved for backward was modified.
     */
    public int version() {
        return version;
    }

    public void bumpVersion() {
        version++;
    }

    /** Element {@code i} converted to double. */
    public double getDouble(int i) {
        return switch (dtype) {
            case FLOAT32 -> ((float[]) array)[i];
            case FLOAT64 -> ((double[]) array)[i];
            case INT64 -> ((long[]) array)[i];
            case INT32 -> ((int[]) array)[i];
            case BOOL -> ((boolean[]) array)[i] ? 1 : 0;
        };
    }

    /** Element {@code i} converted to long (floating values truncate toward zero). */
    public long getLong(int i) {
        return switch (dtype) {
            case FLOAT32 -> (long) ((float[]) array)[i];
            case FLOAT64 -> (long) ((double[]) array)[i];
            case INT64 -> ((long[]) array)[i];
            case INT32 -> ((int[]) array)[i];
            case BOOL -> ((boolean[]) array)[i] ? 1 : 0;
        };
    }

    public void setDouble(int i, double v) {
        switch (dtype) {
            case FLOAT32 -> ((float[]) array)[i] = (float) v;
            case FLOAT64 -> ((double[]) array)[i] = v;
            case INT64 -> ((long[]) array)[i] = (long) v;
            case INT32 -> ((int[]) array)[i] = (int) v;
            case BOOL -> ((boolean[]) array)[i] = v != 0;
        }
    }

    public void setLong(int i, long v) {
        switch (dtype) {
            case FLOAT32 -> ((float[]) array)[i] = v;
            case FLOAT64 -> ((double[]) array)[i] = v;
            case INT64 -> ((long[]) array)[i] = v;
            case INT32 -> ((int[]) array)[i] = (int) v;
            case BOOL -> ((boolean[]) array)[i] = v != 0;
        }
    }
}
