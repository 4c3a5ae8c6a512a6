package dev.ferry.tensor;

/**
 * Element type of a {@link Tensor}. Names and promotion rules follow PyTorch: {@code float32} is the
 * default floating type, {@code int64} the default integer type.
 *
 * <p>Type promotion ({@link #promote}) picks the "larger" category first (bool &lt; integer &lt;
 * floating) and then the wider type, as {@code torch.result_type} does for two tensors.
 */
public enum DType {
    BOOL("bool", 1, false, false),
    INT32("int32", 4, false, true),
    INT64("int64", 8, false, true),
    FLOAT32("float32", 4, true, true),
    FLOAT64("float64", 8, true, true);

    private final String displayName;
    private final int byteSize;
    private final boolean floating;
    private final boolean numeric;

    DType(String displayName, int byteSize, boolean floating, boolean numeric) {
        this.displayName = displayName;
        this.byteSize = byteSize;
        this.floating = floating;
        this.numeric = numeric;
    }

    /** True for {@link #FLOAT32} and {@link #FLOAT64}. */
    public boolean isFloatingPoint() {
        return floating;
    }

    /** True for integer types (not bool). */
    public boolean isIntegral() {
        return numeric && !floating;
    }

    /** Size of one element in bytes. */
    public int byteSize() {
        return byteSize;
    }

    /** The type both operands of a binary op are converted to (PyTorch's rule for two tensors). */
    public static DType promote(DType a, DType b) {
        return a.ordinal() >= b.ordinal() ? a : b;
    }

    /**
     * The result type of {@code tensor op scalar}: a scalar never widens within a category, but a
     * floating scalar makes an integer or bool tensor {@code float32} (as a Python float does).
     */
    public static DType promoteWithScalar(DType tensor, boolean scalarIsFloating) {
        if (scalarIsFloating && !tensor.floating) {
            return FLOAT32;
        }
        if (!scalarIsFloating && tensor == BOOL) {
            return INT64;
        }
        return tensor;
    }

    @Override
    public String toString() {
        return displayName;
    }
}
