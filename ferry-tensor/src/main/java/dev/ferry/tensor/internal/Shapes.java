package dev.ferry.tensor.internal;

import java.util.Arrays;

/** Shape and stride arithmetic shared by ops and kernels. */
public final class Shapes {
    private Shapes() {
    }

    public static int numel(int[] shape) {
        long n = 1;
        for (int s : shape) {
            n *= s;
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("tensor of shape " + str(shape) + " has " + n
                    + " elements; at most 2^31-1 are supported");
        }
        return (int) n;
    }

    public static int[] contiguousStrides(int[] shape) {
        int[] strides = new int[shape.length];
        int s = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            strides[i] = s;
            s *= Math.max(shape[i], 1);
        }
        return strides;
    }

    /** Whether shape/strides describe a row-major dense layout (size-1 dims may have any stride). */
    public static boolean isContiguous(int[] shape, int[] strides) {
        int expected = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] == 1) {
                continue;
            }
            if (shape[i] == 0) {
                return true;
            }
            if (strides[i] != expected) {
                return false;
            }
            expected *= shape[i];
        }
        return true;
    }

    /** Wraps a possibly negative dim into [0, rank), failing with PyTorch's message otherwise. */
    public static int normalizeDim(int dim, int rank) {
        int r = Math.max(rank, 1);
        if (dim < -r || dim >= r) {
            throw new IndexOutOfBoundsException("Dimension out of range (expected to be in range of [" + (-r) + ", "
                    + (r - 1) + "], but got " + dim + ")");
        }
        return dim < 0 ? dim + r : dim;
    }

    /**
     * {@link #broadcast(int[], int[])} whose error also names the op and both full shapes, e.g.
     * {@code ... at non-singleton dimension 1 (mul of shapes [2, 3] and [4])}.
     */
    public static int[] broadcast(String op, int[] a, int[] b) {
        try {
            return broadcast(a, b);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (" + op + " of shapes " + str(a) + " and " + str(b)
                    + ")", e);
        }
    }

    /** The broadcast shape of two shapes (numpy rules), or a PyTorch-style error. */
    public static int[] broadcast(int[] a, int[] b) {
        int n = Math.max(a.length, b.length);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            int ai = i - (n - a.length);
            int bi = i - (n - b.length);
            int da = ai >= 0 ? a[ai] : 1;
            int db = bi >= 0 ? b[bi] : 1;
            if (da != db && da != 1 && db != 1) {
                throw new IllegalArgumentException("The size of tensor a (" + da + ") must match the size of tensor b ("
                        + db + ") at non-singleton dimension " + i);
            }
            out[i] = da == 1 ? db : da;
        }
        return out;
    }

    /**
     * Strides that read a tensor of {@code shape}/{@code strides} as if expanded to {@code target}
     * (0 on broadcast dims). The caller has checked that the shapes broadcast.
     */
    public static int[] broadcastStrides(int[] shape, int[] strides, int[] target) {
        int[] out = new int[target.length];
        int off = target.length - shape.length;
        for (int i = 0; i < shape.length; i++) {
            out[i + off] = shape[i] == 1 && target[i + off] != 1 ? 0 : strides[i];
        }
        return out;
    }

    /** Resolves one -1 entry against {@code numel}, as view/reshape do. */
    public static int[] inferSize(int[] shape, int numel) {
        int[] out = shape.clone();
        int infer = -1;
        long known = 1;
        for (int i = 0; i < out.length; i++) {
            if (out[i] == -1) {
                if (infer >= 0) {
                    throw new IllegalArgumentException("only one dimension can be inferred");
                }
                infer = i;
            } else if (out[i] < 0) {
                throw new IllegalArgumentException("invalid shape dimension " + out[i]);
            } else {
                known *= out[i];
            }
        }
        if (infer >= 0 && known != 0 && numel % known == 0) {
            out[infer] = (int) (numel / known);
        } else if (infer >= 0 || known != numel) {
            throw new IllegalArgumentException("shape '" + str(shape) + "' is invalid for input of size " + numel);
        }
        return out;
    }

    public static String str(int[] shape) {
        return Arrays.toString(shape);
    }

    public static void checkShape(int[] shape) {
        for (int s : shape) {
            if (s < 0) {
                throw new IllegalArgumentException("Trying to create tensor with negative dimension " + s + ": "
                        + str(shape));
            }
        }
    }
}
