package dev.ferry.rpc.internal.wire;

import com.sun.management.ThreadMXBean;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.testing.ByteMutations;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import org.apache.fory.serializer.BufferObject;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fuzzes the wire-frame decoder ({@link FrameCodec#decode}, {@link FrameCodec#decodeOwned}) and the
 * chunk header reader ({@link Chunks#readHeader}) with random bytes and with mutations of valid
 * encoded frames: bit flips, byte overwrites, truncations, inserted bytes, and length or count
 * fields (the header, body and buffer lengths, the buffer and header-entry counts) set to huge,
 * negative or off-by-one values. Every input must either decode or be refused with
 * {@link RpcException} {@code PROTOCOL_ERROR} &mdash; never another exception type &mdash; and the
 * decoder may allocate no more than a bounded multiple of the input's own size, whatever lengths
 * the input claims (measured with the JVM's per-thread allocation counter).
 *
 * <p>The suite runs 1,000 tries per property (a few seconds). To fuzz longer, raise jqwik's default:
 * <pre>
 * mvn -B -ntp -pl ferry-rpc -Dtest=FrameFuzzTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Djqwik.tries.default=1000000 verify
 * </pre>
 * (jqwik reads {@code jqwik.tries.default} as a JUnit Platform configuration parameter; unset, each
 * property runs 1,000 tries).
 */
class FrameFuzzTest {
    /** Allocation the decoder may make whatever the input: a message object, a few lists, strings. */
    private static final long FIXED_ALLOCATION = 64 << 10;
    /** Per byte of input: copies of the body, buffers and header values, strings (UTF-16 at worst). */
    private static final long ALLOCATION_PER_BYTE = 8;
    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Property(shrinking = ShrinkingMode.BOUNDED)
    void randomBytesDecodeOrFailClearly(@ForAll("randomFrames") byte[] frame) {
        decodeBothWays(frame);
    }

    @Property(shrinking = ShrinkingMode.BOUNDED)
    void mutatedFramesDecodeOrFailClearly(@ForAll("mutatedFrames") byte[] frame) {
        decodeBothWays(frame);
    }

    @Property(shrinking = ShrinkingMode.BOUNDED)
    void chunkHeadersParseOrFailClearly(@ForAll("randomFrames") byte[] header,
                                        @ForAll int dataBytes) {
        try {
            Chunks.Header fields = Chunks.readHeader(Unpooled.wrappedBuffer(header), dataBytes, 1 << 20);
            assertThat(fields.total()).isGreaterThan(Chunks.CHUNK_BYTES).isLessThanOrEqualTo(1 << 20);
        } catch (RpcException e) {
            assertProtocolError(e);
        }
    }

    /**
     * A frame of a few hundred bytes claiming the most header entries the format allows (65,535) with
     * distinct names decodes them all. The duplicate-name check of {@link CallHeaders#ofRaw} was
     * quadratic in the entries (seconds of CPU per such frame; now a hash set past a few entries, this
     * example a fraction of a second).
     */
    @Example
    void manyDistinctHeaderEntriesAllDecode() {
        int count = 0xFFFF;
        byte[] digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_".getBytes(
                java.nio.charset.StandardCharsets.US_ASCII);
        ByteBuffer section = ByteBuffer.allocate(2 + count * (1 + 3 + 4));
        section.putShort((short) count);
        for (int i = 0; i < count; i++) {
            section.put((byte) 3).put(digits[i & 63]).put(digits[(i >> 6) & 63]).put(digits[i >> 12]).putInt(0);
        }
        byte[] header = section.array();
        ByteBuffer frame = ByteBuffer.allocate(1 + 1 + 2 + 8 + 4 + header.length + 4 + 4);
        frame.put((byte) FrameCodec.VERSION).put((byte) MessageKind.CALL.code()).putShort((short) 0)
                .putLong(1).putInt(header.length).put(header).putInt(0).putInt(0);
        InboundMessage message = FrameCodec.decode(Unpooled.wrappedBuffer(frame.array()));
        assertThat(message.headers().size()).isEqualTo(count);
    }

    private static void decodeBothWays(byte[] frame) {
        decode(frame, () -> FrameCodec.decode(Unpooled.wrappedBuffer(frame)));
        ByteBuffer owned = ByteBuffer.allocateDirect(frame.length).put(frame).flip();
        decode(frame, () -> FrameCodec.decodeOwned(owned.duplicate()));
    }

    /**
     * Decodes the frame twice and bounds what the second decoding allocated: the first may link a
     * call site met for the first time (an error message's string concatenation bootstraps tens of
     * kilobytes once per JVM), which no input can repeat.
     */
    private static void decode(byte[] frame, java.util.function.Supplier<InboundMessage> decoder) {
        decodeOnce(frame, decoder);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        decodeOnce(frame, decoder);
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated)
                .as("bytes allocated decoding a frame of %d bytes", frame.length)
                .isLessThanOrEqualTo(FIXED_ALLOCATION + ALLOCATION_PER_BYTE * frame.length);
    }

    private static void decodeOnce(byte[] frame, java.util.function.Supplier<InboundMessage> decoder) {
        try {
            InboundMessage message = decoder.get();
            if (message != null) {
                long carried = message.inBand().remaining();
                for (ByteBuffer buffer : message.outOfBand()) {
                    carried += buffer.remaining();
                }
                assertThat(carried).isLessThanOrEqualTo(frame.length);
            }
        } catch (RpcException e) {
            assertProtocolError(e);
        } catch (RuntimeException | Error e) {
            fail("decoding " + frame.length + " bytes threw " + e + " rather than a PROTOCOL_ERROR", e);
        }
    }

    private static void assertProtocolError(RpcException e) {
        assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
        assertThat(e.getMessage()).isNotBlank();
    }

    @Provide
    Arbitrary<byte[]> randomFrames() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(512);
    }

    @Provide
    Arbitrary<byte[]> mutatedFrames() {
        Arbitrary<byte[]> valid = Combinators.combine(
                Arbitraries.of(MessageKind.values()),
                Arbitraries.longs(),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(64),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(64).list().ofMaxSize(4),
                Arbitraries.strings().ofMinLength(1).ofMaxLength(8).list().ofMaxSize(4))
                .as(FrameFuzzTest::encode);
        return ByteMutations.mutated(valid, Arbitraries.oneOf(ByteMutations.any(), lengthField()), 4);
    }

    /** A valid frame (without its length prefix), as a worker would send it. */
    private static byte[] encode(MessageKind kind, long id, byte[] body, List<byte[]> buffers, List<String> names) {
        CallHeaders headers = CallHeaders.empty();
        for (String name : names) {
            headers = headers.with(dev.ferry.rpc.spi.HeaderKey.ofLong(name), (long) name.length());
        }
        List<BufferObject> outOfBand = new ArrayList<>();
        for (byte[] buffer : buffers) {
            outOfBand.add(new BufferObject.ByteBufferBufferObject(ByteBuffer.wrap(buffer)));
        }
        ByteBuf frame = FrameCodec.encode(new OutboundMessage(kind, id, headers,
                new EncodedPayload(body, outOfBand)), ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            frame.skipBytes(4);
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            return bytes;
        } finally {
            frame.release();
        }
    }

    /** A length or count field the format defines (body length, buffer count or a length) set to a hostile value. */
    private static Arbitrary<UnaryOperator<byte[]>> lengthField() {
        Arbitrary<Integer> claims = Arbitraries.oneOf(ByteMutations.claims(), Arbitraries.just(SharedBuffers.DESCRIPTOR));
        return claims.map(value -> frame -> {
            if (frame.length < 20) {
                return frame;
            }
            ByteBuffer in = ByteBuffer.wrap(frame);
            // In long arithmetic: earlier mutations may have left any value in these fields.
            long bodyAt = 16L + in.getInt(12);
            if (bodyAt < 16 || bodyAt + 4 > frame.length) {
                return frame;
            }
            long countAt = bodyAt + 4 + in.getInt((int) bodyAt);
            long target = countAt >= 0 && countAt + 4 <= frame.length && (value & 1) == 0 ? countAt : bodyAt;
            in.putInt((int) target, value);
            return frame;
        });
    }
}
