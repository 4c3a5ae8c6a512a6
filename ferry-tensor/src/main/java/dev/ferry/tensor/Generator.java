package dev.ferry.tensor;

import dev.ferry.tensor.internal.random.MersenneTwister;

/**
 * A seeded source of random numbers for tensor factories and in-place fills. It reproduces
 * PyTorch's CPU generator (MT19937 and the same transformations), so {@code Tensors.rand},
 * {@code randn} and {@code randint} with a generator seeded like {@code torch.Generator().manual_seed(s)}
 * yield the same values as PyTorch, up to the last bit of float transcendental functions.
 *
 * <p>Not thread-safe: use one generator per thread, or synchronize.
 */
public final class Generator {
    private static final Generator DEFAULT = new Generator(67280421310721L);

    private final MersenneTwister engine;
    private long seed;
    private double nextNormal = Double.NaN;

    public Generator(long seed) {
        this.engine = new MersenneTwister(seed);
        this.seed = seed;
    }

    /**
     * The generator used when none is passed (PyTorch's default generator). Seed it with
     * {@link #manualSeed} for reproducible runs; code that may run concurrently should pass its own.
     */
    public static Generator defaultGenerator() {
        return DEFAULT;
    }

    /** Re-seeds (as {@code manual_seed}) and returns this. */
    public Generator manualSeed(long seed) {
        this.seed = seed;
        engine.seed(seed);
        nextNormal = Double.NaN;
        return this;
    }

    public long initialSeed() {
        return seed;
    }

    /** 32 random bits as an unsigned value. */
    public long random32() {
        return engine.nextUnsigned32();
    }

    /** 64 random bits (two draws, the first in the high half, as PyTorch). */
    public long random64() {
        long hi = engine.nextUnsigned32();
        long lo = engine.nextUnsigned32();
        return (hi << 32) | lo;
    }

    /** Uniform float in [0, 1) from 24 random bits (PyTorch's float transformation). */
    public float nextFloat() {
        return (random32() & ((1 << 24) - 1)) * 0x1.0p-24f;
    }

    /** Uniform double in [0, 1) from 53 random bits. */
    public double nextDouble() {
        return (random64() & ((1L << 53) - 1)) * 0x1.0p-53;
    }

    /** A standard normal double (Box-Muller; the second value of each pair is cached). */
    public double nextGaussian() {
        if (!Double.isNaN(nextNormal)) {
            double r = nextNormal;
            nextNormal = Double.NaN;
            return r;
        }
        double u1 = nextDouble();
        double u2 = nextDouble();
        double r = Math.sqrt(-2.0 * Math.log1p(-u2));
        double theta = 2.0 * Math.PI * u1;
        nextNormal = r * Math.sin(theta);
        return r * Math.cos(theta);
    }
}
