package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.Loans;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Large frames assembled from their chunks decode exactly, whether the receive pool's fresh memory
 * is committed as it is written (the frame's buffer is taken whole on its first chunk) or at once,
 * as off Linux (the buffer is taken in steps as the chunks arrive, and then holds at most twice
 * what has arrived). Frame sizes around chunk boundaries and around the steps; chunks as a worker
 * sends them and as a sender may (a first chunk of one byte, uneven ones); their data appended from
 * reads or read by the socket straight into the frame ({@link FrameAssembler#directTarget}).
 */
class FrameAssemblerTest {
    private static final int CHUNK = Chunks.CHUNK_BYTES;
    /** Frame sizes (without the length prefix): just over a chunk, at and around 2, 3, 4 and 9 chunks. */
    private static final int[] SIZES = {CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK, 2 * CHUNK + 1, 3 * CHUNK - 1,
            4 * CHUNK, 4 * CHUNK + 1, 9 * CHUNK + 12_345};
    /** A pool of each kind for the whole class, as a transport has one. */
    private static final LargeBufferPool LAZY = new LargeBufferPool(64L << 20, new MemoryPressure(false));
    private static final LargeBufferPool COMMITTED_AT_ONCE =
            new LargeBufferPool(64L << 20, new MemoryPressure(false), false);

    /** How a sender cuts a frame into chunks. */
    enum Cut {
        /** As a worker sends: full chunks, the last what is left. */
        WHOLE_CHUNKS,
        /** A first chunk of one byte (the smallest first step), then full chunks. */
        ONE_BYTE_FIRST,
        /** Uneven chunks, between 1 byte and a full chunk. */
        UNEVEN
    }

    static Stream<Arguments> frames() {
        List<Arguments> cases = new ArrayList<>();
        for (boolean lazy : new boolean[] {true, false}) {
            for (int size : SIZES) {
                for (Cut cut : Cut.values()) {
                    cases.add(Arguments.of(lazy, size, cut));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "lazy={0} frame={1} {2}")
    @MethodSource("frames")
    void aLargeFrameDecodesExactlyAndHoldsWhatItsMemoryAllows(boolean lazy, int frameBytes, Cut cut) {
        assumeTrue(!lazy || LazyMemory.isLazy(), "anonymous mappings need Java 22+ on Linux");
        LargeBufferPool pool = lazy ? LAZY : COMMITTED_AT_ONCE;
        long id = 3;
        byte[] frame = TestFrames.frameBytes(id, frameBytes - overhead(id));
        assertThat(frame).hasSize(frameBytes);
        FrameAssembler assembler = new FrameAssembler(TestFrames.MAX, pool);
        InboundMessage message = null;
        int at = 0;
        for (int chunk = 0; at < frame.length; chunk++) {
            int n = Math.min(frame.length - at, chunkBytes(cut, chunk));
            assertThat(message).as("a message before its last chunk").isNull();
            message = feedChunk(assembler, frame, at, n, chunk % 2 == 0);
            at += n;
            if (at < frame.length) {
                if (lazy) {
                    assertThat(assembler.partialBytes()).as("the whole frame, taken on its claim").isEqualTo(frame.length);
                } else {
                    assertThat(assembler.partialBytes()).as("held after %d of %d bytes", at, frame.length)
                            .isLessThanOrEqualTo(2L * at);
                }
            }
        }
        assertThat(message).isNotNull();
        assertThat(assembler.partialBytes()).isZero();
        ByteBuffer data = message.outOfBand().get(0);
        int size = frameBytes - overhead(id);
        assertThat(data.remaining()).isEqualTo(size + 1); // and the order byte
        for (int i = 0; i < size; i++) {
            if (data.get(data.position() + i) != (byte) (i * id)) {
                throw new AssertionError("byte " + i + " of " + size + " is " + data.get(data.position() + i));
            }
        }
    }

    /**
     * Each buffer a frame outgrew goes back to the pool at once, not when a collection finds it: once
     * the frame is whole, the pool lends only the frame's own range (its message still holds it).
     */
    @Test
    void theBuffersAFrameOutgrewGoBackAtOnce() {
        assumeTrue(Loans.available(), "views that can be closed need native access");
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false), false);
        byte[] frame = TestFrames.frameBytes(1, 9 * CHUNK);
        FrameAssembler assembler = new FrameAssembler(TestFrames.MAX, pool);
        InboundMessage message = null;
        for (int at = 0, chunk = 0; at < frame.length; at += CHUNK, chunk++) {
            message = feedChunk(assembler, frame, at, Math.min(CHUNK, frame.length - at), chunk % 2 == 0);
        }
        assertThat(message).isNotNull();
        assertThat(pool.lentBytes()).isEqualTo(LargeBufferPool.rangeSize(frame.length));
        assertThat(pool.stats()).contains("released=4"); // the steps of 1, 2, 4 and 8 MiB
        pool.clear();
    }

    private static int chunkBytes(Cut cut, int chunk) {
        return switch (cut) {
            case WHOLE_CHUNKS -> CHUNK;
            case ONE_BYTE_FIRST -> chunk == 0 ? 1 : CHUNK;
            case UNEVEN -> 1 + (int) ((chunk * 2_654_435_761L) % CHUNK);
        };
    }

    /**
     * One chunk of {@code n} bytes of {@code frame} from {@code at}: its data appended from two reads,
     * or, {@code direct}, mostly read straight into the frame's buffer as the socket does.
     */
    private static InboundMessage feedChunk(FrameAssembler assembler, byte[] frame, int at, int n, boolean direct) {
        ByteBuf header = Chunks.header(ByteBufAllocator.DEFAULT, 0, frame.length, n);
        try {
            assembler.startChunk(header.skipBytes(4), n);
        } finally {
            header.release();
        }
        int first = n / 2;
        InboundMessage message = first > 0 ? assembler.append(Unpooled.wrappedBuffer(frame, at, first)) : null;
        if (direct) {
            ByteBuffer target = assembler.directTarget();
            assertThat(target.remaining()).isEqualTo(n - first);
            target.put(frame, at + first, n - first);
            return assembler.advance(n - first);
        }
        return assembler.append(Unpooled.wrappedBuffer(frame, at + first, n - first));
    }

    /** Bytes of a {@link TestFrames} frame of id {@code id} beyond its buffer. */
    private static int overhead(long id) {
        return TestFrames.frameBytes(id, 0).length;
    }
}
