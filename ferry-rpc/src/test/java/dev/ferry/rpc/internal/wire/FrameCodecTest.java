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
