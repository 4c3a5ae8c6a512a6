package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.RpcException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * How a stream transport splits a large {@link FrameCodec} frame so that it does not hold up the
 * messages behind it. A frame of at most {@link #CHUNK_BYTES} (without its length prefix) travels
 * whole; a larger one is cut into chunks of at most {@link #CHUNK_BYTES} data bytes, each in a unit
 * of its own, and other messages' units may be sent between them.
 *
 * <pre>
 * whole frame (as {@link FrameCodec} writes it; its first byte is the version, 1):
 * +--------+-------------+---------------------------+
 * | length | version = 1 | rest of the frame         |
 * | int32  |     u8      | length - 1 bytes          |
 * +--------+-------------+---------------------------+
 *
 * chunk of a large frame:
 * +--------+---------------+-----------+-----------+------------------------------------+
 * | length | marker = 0xC7 | stream    | total     | data                               |
 * | int32  |      u8       | int32     | int32     | length - 9 bytes (1 .. CHUNK_BYTES) |
 * +--------+---------------+-----------+-----------+------------------------------------+
 * stream: numbers the large frames of one connection and direction (the sender's counter)
 * total:  size of the whole frame without its length prefix, the same in every chunk
 * data:   the next bytes of that frame (its version byte onwards), in order
 * </pre>
 *
 * The receiver appends each chunk's data to its stream and, once {@code total} bytes are there,
 * decodes them as one frame. Chunks of one stream arrive in order (one byte stream, one writer);
 * chunks of different streams and whole frames may be interleaved in any way.
 */
public final class Chunks {
    /** Data bytes per chunk, and the largest frame that travels whole. */
    public static final int CHUNK_BYTES = 1 << 20;
    /** First byte of a chunk unit; a whole frame starts with {@link FrameCodec#VERSION}. */
    public static final int MARKER = 0xC7;
    /** Bytes of a chunk unit before its data, the length prefix included. */
    public static final int HEADER_BYTES = 4 + 1 + 4 + 4;
    /** Bytes of a chunk unit before its data, without the length prefix. */
    public static final int OVERHEAD = HEADER_BYTES - 4;

    private Chunks() {
    }

    /** Whether a frame of {@code frameBytes} (no length prefix) must be split. */
    public static boolean isLarge(long frameBytes) {
        return frameBytes > CHUNK_BYTES;
    }

    /** The header of a chunk carrying {@code dataBytes} of stream {@code stream}. */
    public static ByteBuf header(ByteBufAllocator alloc, int stream, int total, int dataBytes) {
        ByteBuf header = alloc.buffer(HEADER_BYTES);
        header.writeInt(OVERHEAD + dataBytes);
        header.writeByte(MARKER);
        header.writeInt(stream);
        header.writeInt(total);
        return header;
    }

    /**
     * Reads a chunk unit's header ({@link #OVERHEAD} bytes after the length prefix, positioned at the
     * marker) of a chunk carrying {@code dataBytes} of data.
     */
    public static Header readHeader(ByteBuf header, int dataBytes, long maxFrameBytes) {
        if (dataBytes < 1 || header.readableBytes() < OVERHEAD) {
            throw protocol("chunk of " + (OVERHEAD + dataBytes) + " bytes is too short");
        }
        header.readUnsignedByte();
        int stream = header.readInt();
        int total = header.readInt();
        if (total <= CHUNK_BYTES || total > maxFrameBytes) {
            throw protocol("chunked frame of " + total + " bytes exceeds the maximum message size of "
                    + maxFrameBytes + " bytes or is small enough to travel whole");
        }
        return new Header(stream, total);
    }

    /** The fields of a chunk unit. */
    public record Header(int stream, int total) {
    }

    private static RpcException protocol(String message) {
        return new RpcException(RpcException.Code.PROTOCOL_ERROR, message);
    }
}
