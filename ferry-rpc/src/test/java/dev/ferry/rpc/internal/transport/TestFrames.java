package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.apache.fory.serializer.BufferObject;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Frames and chunks as a worker writes them, for the tests of the receiving side (no sockets): a
 * CALL of id {@code id} carrying one out-of-band buffer of {@code size} bytes, byte {@code i} of
 * which is {@code (byte) (i * id)}, so a test can check any byte it received.
 */
final class TestFrames {
    static final long MAX = 64L << 20;

    private TestFrames() {
    }

    /** The frame without its length prefix. */
    static byte[] frameBytes(long id, int size) {
        ByteBuf frame = frameWithPrefix(id, size);
        frame.skipBytes(4);
        byte[] bytes = new byte[frame.readableBytes()];
        frame.readBytes(bytes);
        frame.release();
        return bytes;
    }

    /** The frame with its length prefix, as a whole-frame unit. */
    static ByteBuf frameWithPrefix(long id, int size) {
        byte[] data = new byte[size];
        for (int i = 0; i < size; i++) {
            data[i] = (byte) (i * id);
        }
        EncodedPayload payload = new EncodedPayload(new byte[] {1},
                List.of(new BufferObject.ByteBufferBufferObject(ByteBuffer.wrap(data))));
        ByteBuf encoded = FrameCodec.encode(new OutboundMessage(MessageKind.CALL, id, CallHeaders.empty(), payload),
                ByteBufAllocator.DEFAULT, MAX);
        try {
            return Unpooled.copiedBuffer(encoded);
        } finally {
            encoded.release();
        }
    }

    /** Writes the chunk of {@code frame} that starts at {@code at} (stream {@code streamId}); returns where the next starts. */
    static int writeChunk(ByteBuf stream, int streamId, byte[] frame, int at) {
        if (at >= frame.length) {
            return at;
        }
        int n = Math.min(Chunks.CHUNK_BYTES, frame.length - at);
        ByteBuf header = Chunks.header(ByteBufAllocator.DEFAULT, streamId, frame.length, n);
        stream.writeBytes(header);
        header.release();
        stream.writeBytes(frame, at, n);
        return at + n;
    }
}
