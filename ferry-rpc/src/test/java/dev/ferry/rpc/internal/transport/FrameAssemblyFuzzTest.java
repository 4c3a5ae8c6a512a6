package dev.ferry.rpc.internal.transport;

import com.sun.management.ThreadMXBean;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.testing.ByteMutations;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.constraints.IntRange;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

import static dev.ferry.rpc.internal.transport.TestFrames.frameBytes;
import static dev.ferry.rpc.internal.transport.TestFrames.frameWithPrefix;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fuzzes how a connection's bytes become messages ({@link UnitReader} splitting units,
 * {@link FrameAssembler} reassembling chunks into frames), without sockets: streams of small
 * frames and chunked large ones (over {@link Chunks#CHUNK_BYTES}, up to three at once, their chunks
 * interleaved with each other and with small frames in a random order), read in random pieces (a
 * byte to hundreds of kilobytes), into a receive pool whose fresh memory is committed as it is
 * written or, chosen per try, at once (as off Linux: large frames then grow in steps).
 * <ul>
 *   <li>A valid stream, however it is interleaved and split, delivers every message whole and
 *       exact, and every buffer read is released.</li>
 *   <li>A stream with units dropped, repeated or swapped, chunk header fields (length, stream,
 *       total) set to hostile values, or bytes mutated anywhere either goes on delivering
 *       well-formed messages or fails with {@code PROTOCOL_ERROR} (the connection then closes) &mdash;
 *       never another exception; every buffer read is released either way; reading allocates at
 *       most {@value #FIXED_ALLOCATION} bytes of heap plus {@value #ALLOCATION_PER_BYTE} per byte read.</li>
 * </ul>
 *
 * <p>The suite runs 1,000 tries per property. Longer: {@code ./ferry fuzz 100000}, or
 * {@code -Djqwik.tries.default=N} on {@code -Dtest=FrameAssemblyFuzzTest}.
 */
class FrameAssemblyFuzzTest {
    private static final long FIXED_ALLOCATION = 1 << 20;
    private static final long ALLOCATION_PER_BYTE = 2;
    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    /**
     * One receive pool for every try, as a transport has: the frames of failed connections and the
     * messages the tries drop come back to it as a worker's do, by the collections it asks for.
     */
    private static final LargeBufferPool POOL = new LargeBufferPool(32L << 20, new MemoryPressure(true));
    /** The same, with fresh memory committed at once (as off Linux): large frames are taken in steps. */
    private static final LargeBufferPool COMMITTED_AT_ONCE =
            new LargeBufferPool(32L << 20, new MemoryPressure(true), false);

    /** Sizes of the large frames' buffers: two chunks (the second of one byte, or of a few thousand), three. */
    private static final int[] LARGE_SIZES = {Chunks.CHUNK_BYTES + 1, Chunks.CHUNK_BYTES + 2_999,
            2 * Chunks.CHUNK_BYTES + 17};
    /** Large frames by id and size, made once: a try then costs what it reads, not what it builds. */
    private static final Map<List<Long>, byte[]> LARGE_FRAMES = new java.util.concurrent.ConcurrentHashMap<>();

    /** One unit of a stream (a whole frame or a chunk), with the message it belongs to. */
    private record Unit(long id, byte[] bytes) {
    }

    @Property(shrinking = ShrinkingMode.OFF)
    void aValidStreamDeliversEveryMessageExactlyHoweverItIsSplit(
            @ForAll @IntRange(min = 0, max = 8) int smalls, @ForAll @IntRange(min = 0, max = 3) int larges,
            @ForAll long seed, @ForAll boolean committedAtOnce) {
        SplittableRandom random = new SplittableRandom(seed);
        Map<Long, Integer> sizes = new HashMap<>();
        List<Unit> units = stream(smalls, larges, random, sizes);
        ByteBuf stream = concat(units);
        List<InboundMessage> got = new ArrayList<>();
        EmbeddedChannel channel = channel(got, committedAtOnce);
        feed(channel, stream, random);
        assertThat(channel.finishAndReleaseAll()).isFalse();
        assertThat(got).extracting(InboundMessage::id).containsExactlyInAnyOrderElementsOf(sizes.keySet());
        for (InboundMessage message : got) {
            int size = sizes.get(message.id());
            ByteBuffer data = message.outOfBand().get(0);
            assertThat(data.remaining()).isEqualTo(size + 1);
            for (int i = 0; i < size; i += 997) {
                assertThat(data.get(data.position() + i)).isEqualTo((byte) (i * message.id()));
            }
        }
        assertThat(stream.refCnt()).as("every read released").isEqualTo(1);
        stream.release();
    }

    @Property(shrinking = ShrinkingMode.OFF)
    void aDamagedStreamDeliversWellFormedMessagesOrFailsWithAProtocolError(
            @ForAll @IntRange(min = 0, max = 6) int smalls, @ForAll @IntRange(min = 1, max = 3) int larges,
            @ForAll long seed, @ForAll("damages") List<UnaryOperator<List<Unit>>> damages,
            @ForAll("byteMutations") List<UnaryOperator<byte[]>> bytes, @ForAll boolean committedAtOnce) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Unit> units = stream(smalls, larges, random, new HashMap<>());
        for (UnaryOperator<List<Unit>> damage : damages) {
            units = damage.apply(units);
        }
        byte[] whole = concatBytes(units);
        for (UnaryOperator<byte[]> mutation : bytes) {
            whole = mutation.apply(whole);
        }
        ByteBuf stream = Unpooled.wrappedBuffer(whole);
        List<InboundMessage> got = new ArrayList<>();
        EmbeddedChannel channel = channel(got, committedAtOnce);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        try {
            feed(channel, stream, random);
            Statistics.collect("read through");
        } catch (RpcException e) {
            Statistics.collect("PROTOCOL_ERROR");
            assertThat(e.code()).as(e.toString()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
            assertThat(e.getMessage()).isNotBlank();
        } catch (RuntimeException e) {
            fail("a damaged stream of " + whole.length + " bytes threw " + e + " rather than a PROTOCOL_ERROR", e);
        }
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        channel.finishAndReleaseAll();
        assertThat(allocated).as("heap allocated reading %d bytes", whole.length)
                .isLessThanOrEqualTo(FIXED_ALLOCATION + ALLOCATION_PER_BYTE * whole.length);
        for (InboundMessage message : got) {
            assertThat(message.payloadBytes()).isLessThanOrEqualTo(whole.length);
        }
        assertThat(stream.refCnt()).as("every read released").isEqualTo(1);
        stream.release();
    }

    /** Reads the rest of {@code stream} in random pieces; stops at the first failure (the connection would close). */
    private static void feed(EmbeddedChannel channel, ByteBuf stream, SplittableRandom random) {
        while (stream.isReadable()) {
            int n = Math.min(stream.readableBytes(), 1 + random.nextInt(random.nextBoolean() ? 20 : 300_000));
            channel.writeInbound(stream.readRetainedSlice(n));
        }
    }

    private static EmbeddedChannel channel(List<InboundMessage> got, boolean committedAtOnce) {
        FrameAssembler assembler = new FrameAssembler(TestFrames.MAX, committedAtOnce ? COMMITTED_AT_ONCE : POOL);
        return new EmbeddedChannel(new UnitReader(assembler, Chunks.CHUNK_BYTES + Chunks.OVERHEAD, got::add,
                offer -> { }));
    }

    /**
     * {@code smalls} whole frames and {@code larges} chunked ones (streams 0, 1, 2), the next unit
     * each time taken at random from a small frame or an unfinished large one; {@code sizes} gets
     * each message's buffer size by id.
     */
    private static List<Unit> stream(int smalls, int larges, SplittableRandom random, Map<Long, Integer> sizes) {
        List<Unit> units = new ArrayList<>();
        List<byte[]> frames = new ArrayList<>();
        int[] at = new int[larges];
        for (int i = 0; i < larges; i++) {
            int size = LARGE_SIZES[random.nextInt(LARGE_SIZES.length)];
            sizes.put(100L + i, size);
            frames.add(LARGE_FRAMES.computeIfAbsent(List.of(100L + i, (long) size), key -> frameBytes(key.get(0),
                    key.get(1).intValue())));
        }
        int smallLeft = smalls;
        long nextSmall = 1;
        while (true) {
            List<Integer> open = new ArrayList<>();
            for (int i = 0; i < larges; i++) {
                if (at[i] < frames.get(i).length) {
                    open.add(i);
                }
            }
            if (open.isEmpty() && smallLeft == 0) {
                return units;
            }
            int pick = random.nextInt(open.size() + (smallLeft > 0 ? 1 : 0));
            if (pick == open.size()) {
                int size = random.nextInt(random.nextBoolean() ? 100 : 70_000);
                long id = nextSmall++;
                sizes.put(id, size);
                ByteBuf frame = frameWithPrefix(id, size);
                byte[] bytes = new byte[frame.readableBytes()];
                frame.readBytes(bytes).release();
                units.add(new Unit(id, bytes));
                smallLeft--;
            } else {
                int large = open.get(pick);
                ByteBuf chunk = Unpooled.buffer();
                at[large] = TestFrames.writeChunk(chunk, large, frames.get(large), at[large]);
                byte[] bytes = new byte[chunk.readableBytes()];
                chunk.readBytes(bytes).release();
                units.add(new Unit(100 + large, bytes));
            }
        }
    }

    private static byte[] concatBytes(List<Unit> units) {
        int total = 0;
        for (Unit unit : units) {
            total += unit.bytes.length;
        }
        ByteBuffer all = ByteBuffer.allocate(total);
        for (Unit unit : units) {
            all.put(unit.bytes);
        }
        return all.array();
    }

    private static ByteBuf concat(List<Unit> units) {
        return Unpooled.wrappedBuffer(concatBytes(units));
    }

    @Provide
    Arbitrary<List<UnaryOperator<List<Unit>>>> damages() {
        Arbitrary<Integer> which = Arbitraries.integers().greaterOrEqual(0);
        Arbitrary<UnaryOperator<List<Unit>>> drop = which.map(i -> units -> {
            List<Unit> out = new ArrayList<>(units);
            if (!out.isEmpty()) {
                out.remove(i % out.size());
            }
            return out;
        });
        Arbitrary<UnaryOperator<List<Unit>>> repeat = which.map(i -> units -> {
            List<Unit> out = new ArrayList<>(units);
            if (!out.isEmpty()) {
                out.add(i % out.size(), out.get(i % out.size()));
            }
            return out;
        });
        Arbitrary<UnaryOperator<List<Unit>>> swap = Combinators.combine(which, which).as((i, j) -> units -> {
            List<Unit> out = new ArrayList<>(units);
            if (!out.isEmpty()) {
                java.util.Collections.swap(out, i % out.size(), j % out.size());
            }
            return out;
        });
        // A chunk header's field (length at 0, stream at 5, total at 9) or a frame's length, set hostile.
        Arbitrary<UnaryOperator<List<Unit>>> field = Combinators.combine(which, Arbitraries.of(0, 5, 9),
                        ByteMutations.claims())
                .as((i, offset, value) -> units -> {
                    List<Unit> out = new ArrayList<>(units);
                    if (!out.isEmpty()) {
                        Unit unit = out.get(i % out.size());
                        byte[] bytes = unit.bytes.clone();
                        if (bytes.length >= Chunks.HEADER_BYTES) {
                            ByteBuffer.wrap(bytes).putInt((bytes[4] & 0xFF) == Chunks.MARKER ? offset : 0, value);
                        }
                        out.set(i % out.size(), new Unit(unit.id, bytes));
                    }
                    return out;
                });
        return Arbitraries.oneOf(drop, repeat, swap, field).list().ofMaxSize(3);
    }

    @Provide
    Arbitrary<List<UnaryOperator<byte[]>>> byteMutations() {
        // anywhere in the stream: mostly chunk data, which no check can tell from good data
        return ByteMutations.any().list().ofMaxSize(2);
    }
}
