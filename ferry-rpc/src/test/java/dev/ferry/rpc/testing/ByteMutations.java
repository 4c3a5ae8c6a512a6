package dev.ferry.rpc.testing;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * What the fuzzers do to valid encodings (frames, store requests, call bodies): bit flips, byte
 * overwrites, truncations, inserted bytes, and a 32-bit field anywhere set to a value a hostile
 * peer would pick (lengths and counts are int32 in Ferry's formats). Positions are taken modulo the
 * input's length; a mutation may return its input changed in place or a new array.
 */
public final class ByteMutations {
    /** Values a hostile peer puts in a length or count field. */
    public static final List<Integer> HOSTILE_INTS = List.of(Integer.MAX_VALUE, Integer.MIN_VALUE, -1, 0, 1,
            0xFFFF, 0x7FFF_FFF0, 64 << 20, (64 << 20) + 1);

    private ByteMutations() {
    }

    /** Hostile values and any int. */
    public static Arbitrary<Integer> claims() {
        return Arbitraries.oneOf(Arbitraries.of(HOSTILE_INTS), Arbitraries.integers());
    }

    /** One mutation of any kind. */
    public static Arbitrary<UnaryOperator<byte[]>> any() {
        Arbitrary<Integer> at = Arbitraries.integers().greaterOrEqual(0);
        Arbitrary<UnaryOperator<byte[]>> flip = Combinators.combine(at, Arbitraries.integers().between(0, 7))
                .as((where, bit) -> bytes -> {
                    if (bytes.length > 0) {
                        bytes[where % bytes.length] ^= (byte) (1 << bit);
                    }
                    return bytes;
                });
        Arbitrary<UnaryOperator<byte[]>> overwrite = Combinators.combine(at, Arbitraries.bytes())
                .as((where, value) -> bytes -> {
                    if (bytes.length > 0) {
                        bytes[where % bytes.length] = value;
                    }
                    return bytes;
                });
        Arbitrary<UnaryOperator<byte[]>> truncate = at.map(where -> bytes ->
                Arrays.copyOf(bytes, bytes.length == 0 ? 0 : where % bytes.length));
        Arbitrary<UnaryOperator<byte[]>> insert = Combinators.combine(at,
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(8))
                .as((where, extra) -> bytes -> {
                    int split = bytes.length == 0 ? 0 : where % (bytes.length + 1);
                    byte[] out = new byte[bytes.length + extra.length];
                    System.arraycopy(bytes, 0, out, 0, split);
                    System.arraycopy(extra, 0, out, split, extra.length);
                    System.arraycopy(bytes, split, out, split + extra.length, bytes.length - split);
                    return out;
                });
        Arbitrary<UnaryOperator<byte[]>> claim = Combinators.combine(at, claims())
                .as((where, value) -> bytes -> {
                    if (bytes.length >= 4) {
                        ByteBuffer.wrap(bytes).putInt(where % (bytes.length - 3), value);
                    }
                    return bytes;
                });
        return Arbitraries.oneOf(flip, overwrite, truncate, insert, claim);
    }

    /** {@code valid} inputs, each changed by one to {@code most} mutations of {@code kinds}. */
    public static Arbitrary<byte[]> mutated(Arbitrary<byte[]> valid, Arbitrary<UnaryOperator<byte[]>> kinds, int most) {
        return Combinators.combine(valid, kinds.list().ofMinSize(1).ofMaxSize(most)).as((bytes, list) -> {
            byte[] out = bytes;
            for (UnaryOperator<byte[]> mutation : list) {
                out = mutation.apply(out);
            }
            return out;
        });
    }
}
