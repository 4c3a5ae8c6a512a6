package dev.ferry.tensor.internal.random;

/** MT19937, the 32-bit Mersenne Twister (the engine of PyTorch's CPU generator). Not thread-safe. */
public final class MersenneTwister {
    private static final int N = 624;
    private static final int M = 397;
    private final int[] mt = new int[N];
    private int index;

    public MersenneTwister(long seed) {
        seed(seed);
    }

    /** Standard MT19937 initialisation from the low 32 bits of {@code seed}. */
    public void seed(long seed) {
        mt[0] = (int) seed;
        for (int i = 1; i < N; i++) {
            mt[i] = 1812433253 * (mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
        }
        index = N;
    }

    /** The next 32 random bits, as an unsigned value in a long. */
    public long nextUnsigned32() {
        if (index >= N) {
            twist();
        }
        int y = mt[index++];
        y ^= y >>> 11;
        y ^= (y << 7) & 0x9d2c5680;
        y ^= (y << 15) & 0xefc60000;
        y ^= y >>> 18;
        return y & 0xffffffffL;
    }

    private void twist() {
        for (int i = 0; i < N; i++) {
            int y = (mt[i] & 0x80000000) | (mt[(i + 1) % N] & 0x7fffffff);
            int next = mt[(i + M) % N] ^ (y >>> 1);
            if ((y & 1) != 0) {
                next ^= 0x9908b0df;
            }
            mt[i] = next;
        }
        index = 0;
    }
}
