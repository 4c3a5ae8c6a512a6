package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.apache.fory.serializer.BufferObject;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The frame format, without sockets. */
class FrameCodecTest {
    private static final HeaderKey<Long> CONTEXT = HeaderKey.ofLong("ctx");

    @Test
    void roundTripsKindIdHeadersBodyAndBuffers() {
        ByteBuffer big = ByteBuffer.allocate(100_000);
        big.put(99_999, (byte) 7);
        EncodedPayload payload = new EncodedPayload(new byte[] {1, 2, 3},
                List.of(new BufferObject.ByteBufferBufferObject(big)));
        OutboundMessage out = new OutboundMessage(MessageKind.CALL, 42, CallHeaders.empty().with(CONTEXT, 9L), payload);
        ByteBuf frame = FrameCodec.encode(out, ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
            InboundMessage in = FrameCodec.decode(frame);
            assertThat(in.kind()).isEqualTo(MessageKind.CALL);
            assertThat(in.id()).isEqualTo(42);
            assertThat(in.headers().get(CONTEXT)).isEqualTo(9L);
            assertThat(in.inBand().remaining()).isEqualTo(3);
            assertThat(in.outOfBand()).hasSize(1);
            assertThat(in.outOfBand().get(0).get(99_999)).isEqualTo((byte) 7);
        } finally {
            frame.release();
        }
    }

    @Test
    void aCallsDeadlineTravelsAsTheTimeLeftInTheFirstHeaderEntry() {
        long timeLeft = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        OutboundMessage out = new OutboundMessage(MessageKind.CALL, 8, CallHeaders.empty().with(CONTEXT, 3L),
                new EncodedPayload(new byte[] {1}, List.of()), System.nanoTime() + timeLeft);
        ByteBuf frame = FrameCodec.encode(out, ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
            // version, kind, flags, id, header length, then the count and the deadline entry first
            assertThat(frame.getUnsignedShort(frame.readerIndex() + 16)).as("entries").isEqualTo(2);
            assertThat(frame.getByte(frame.readerIndex() + 18)).isEqualTo((byte) FrameCodec.DEADLINE.length());
            InboundMessage in = FrameCodec.decode(frame);
            assertThat(in.remainingNanos()).isPositive().isLessThanOrEqualTo(timeLeft);
            assertThat(in.headers().size()).as("not among the headers").isEqualTo(1);
            assertThat(in.headers().get(CONTEXT)).isEqualTo(3L);
        } finally {
            frame.release();
        }
        ByteBuf none = FrameCodec.encode(new OutboundMessage(MessageKind.CALL, 9, CallHeaders.empty(),
                new EncodedPayload(new byte[] {1}, List.of())), ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            none.skipBytes(4);
            assertThat(FrameCodec.decode(none).remainingNanos()).isZero();
        } finally {
            none.release();
        }
    }

    @Test
    void aDeadlineWithoutTimeLeftIsAProtocolError() {
        ByteBuf frame = FrameCodec.encode(new OutboundMessage(MessageKind.CALL, 8, CallHeaders.empty(),
                new EncodedPayload(new byte[] {1}, List.of()), System.nanoTime() + 1_000_000_000L),
                ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            frame.skipBytes(4);
            int value = frame.readerIndex() + 18 + 1 + FrameCodec.DEADLINE.length() + 4;
            for (long forged : new long[] {0, -1, Long.MIN_VALUE}) {
                frame.setLong(value, forged);
                ByteBuf copy = frame.duplicate();
                assertThatThrownBy(() -> FrameCodec.decode(copy)).isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
                    assertThat(e).hasMessageContaining(FrameCodec.DEADLINE);
                });
            }
        } finally {
            frame.release();
        }
    }

    @Test
    void theLoneFlagTravelsAndIsOffByDefault() {
        OutboundMessage out = new OutboundMessage(MessageKind.CALL, 3, CallHeaders.empty(),
                new EncodedPayload(new byte[] {1}, List.of()));
        ByteBuf plain = FrameCodec.encode(out, ByteBufAllocator.DEFAULT, 1 << 20);
        ByteBuf flagged = FrameCodec.encode(out, ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            FrameCodec.setFlags(flagged, FrameCodec.FLAG_LONE);
            plain.skipBytes(4);
            flagged.skipBytes(4);
            assertThat(FrameCodec.decode(plain).lone()).isFalse();
            InboundMessage in = FrameCodec.decode(flagged);
            assertThat(in.lone()).isTrue();
            assertThat(in.id()).isEqualTo(3);
            assertThat(in.kind()).isEqualTo(MessageKind.CALL);
        } finally {
            plain.release();
            flagged.release();
        }
    }

    @Test
    void largeByteBuffersAreReferredToNotCopied() {
        ByteBuffer direct = ByteBuffer.allocateDirect(FrameCodec.REFERENCE_BYTES).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        direct.put(5, (byte) 9);
        byte[] small = new byte[100];
        EncodedPayload payload = new EncodedPayload(new byte[] {4, 5}, List.of(
                new BufferObject.ByteBufferBufferObject(direct),
                new BufferObject.ByteBufferBufferObject(ByteBuffer.wrap(small))));
        ByteBuf frame = FrameCodec.encode(new OutboundMessage(MessageKind.REPLY, 7, CallHeaders.empty(), payload),
                ByteBufAllocator.DEFAULT, 1 << 20);
        try {
            assertThat(frame).isInstanceOf(io.netty.buffer.CompositeByteBuf.class);
            // The frame reads the buffer's memory: a change made now is what travels.
            direct.put(6, (byte) 8);
            assertThat(frame.readInt()).isEqualTo(frame.readableBytes());
            ByteBuffer whole = ByteBuffer.allocateDirect(frame.readableBytes());
            frame.readBytes(whole);
            InboundMessage in = FrameCodec.decodeOwned(whole.flip());
            assertThat(in.outOfBand()).hasSize(2);
            ByteBuffer first = in.outOfBand().get(0);
            assertThat(first.remaining()).isEqualTo(direct.capacity() + 1); // the bytes, then the order byte
            assertThat(first.get(5)).isEqualTo((byte) 9);
            assertThat(first.get(6)).isEqualTo((byte) 8);
            assertThat(first.get(direct.capacity())).isEqualTo((byte) 0); // little endian
            assertThat(first.isDirect()).isTrue();
            assertThat(in.outOfBand().get(1).remaining()).isEqualTo(101);
            assertThat(direct.position()).isZero();
        } finally {
            frame.release();
        }
    }

    @Test
    void oversizedMessagesAreRefusedBeforeSending() {
        EncodedPayload payload = new EncodedPayload(new byte[2048], List.of());
        assertThatThrownBy(() -> FrameCodec.encode(new OutboundMessage(MessageKind.REPLY, 1, CallHeaders.empty(), payload),
                ByteBufAllocator.DEFAULT, 1024)).isInstanceOf(RpcException.class).hasMessageContaining("exceeds");
    }

    @Test
    void malformedFramesAreProtocolErrors() {
        for (byte[] bad : List.of(new byte[] {9}, new byte[] {1, 99, 0, 0}, new byte[] {1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                0x7f, 0, 0, 0})) {
            assertThatThrownBy(() -> FrameCodec.decode(Unpooled.wrappedBuffer(bad)))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR));
        }
    }
}
