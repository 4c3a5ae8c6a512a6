package dev.ferry.tensor.nn;

/**
 * {@code torch.nn.GELU}: the Gaussian error linear unit {@code x · Φ(x)} element-wise, exact
 * (through erf) or with PyTorch's tanh approximation.
 *
 * <pre>
 * Sequential block = new Sequential(new Linear(512, 2048), new GELU(), new Linear(2048, 512));
 * </pre>
 */
public final class GELU extends Activation {
    /** {@code approximate=} of {@code torch.nn.GELU}. */
    public enum Approximation {
        /** {@code x · ½ · (1 + erf(x / √2))}, PyTorch's default {@code 'none'}. */
        NONE,
        /** {@code ½ · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))}, PyTorch's {@code 'tanh'}. */
        TANH
    }

    private final Approximation approximation;

    /** The exact GELU. */
    public GELU() {
        this(Approximation.NONE);
    }

    public GELU(Approximation approximation) {
        super("GELU", x -> Functional.gelu(x, approximation));
        this.approximation = approximation;
    }

    public Approximation approximation() {
        return approximation;
    }

    @Override
    public String toString() {
        return "GELU(approximate='" + approximation.name().toLowerCase(java.util.Locale.ROOT) + "')";
    }
}
