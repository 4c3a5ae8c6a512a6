package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.RpcException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The units that spread one large message over several connections to the same peer ("bulk
 * connections", or lanes). They travel in the same unit stream as {@link Chunks} (4-byte length,
 * then a marker byte that no frame starts with: frames start with their version, 1, chunks with
 * 0xC7, shared-memory control units with 0xC8), and only between transports that both have bulk
 * connections on.
 *
 * <pre>
 * offer (acceptor ─▶ opener, on the main connection, once, right after it is accepted):
 *   | length=13 | 0xD0 | token int64 | port int32 |      port: where lanes connect
 * lane hello (opener ─▶ acceptor, first unit of every lane):
 *   | length=13 | 0xD2 | token int64 | lane int32 |      token: the offer it answers
 * spread chunk (either way, on the main connection or a lane):
 *   | length    | 0xD1 | stream int32 | total int32 | offset int32 | data (length - 13 bytes) |
 *   stream: the sender's number for the message (per main connection and direction)
 *   total:  size of the whole frame without its length prefix; offset: where data goes in it
 * done (receiver ─▶ sender, on the main connection): the spread message arrived whole
 *   | length=5  | 0xD3 | stream int32 |
 * abort (sender ─▶ receiver, on the main connection): the spread message will not arrive whole
 *   | length=5  | 0xD4 | stream int32 |
 * </pre>
 *
 * A spread message is cut into contiguous parts, one per lane (the main connection carries the
 * first), and each part into chunks of at most {@link Chunks#CHUNK_BYTES}. The receiver writes
 * every chunk at its offset into one buffer and decodes the frame once {@code total} bytes are in.
 */
public final class BulkUnits {
    public static final int OFFER = 0xD0;
    public static final int SPREAD = 0xD1;
    public static final int LANE_HELLO = 0xD2;
    public static final int DONE = 0xD3;
    public static final int ABORT = 0xD4;
    /** Bytes of a spread chunk unit before its data, the length prefix included. */
    public static final int SPREAD_HEADER_BYTES = 4 + 1 + 4 + 4 + 4;
    /** Bytes of a spread chunk unit before its data, without the length prefix. */
    public static final int SPREAD_OVERHEAD = SPREAD_HEADER_BYTES - 4;
    /** Units other than spread chunks are at most this long (length prefix excluded). */
    public static final int CONTROL_MAX_BYTES = 13;

    private BulkUnits() {
    }

    /** Whether {@code marker} starts one of these units. */
    public static boolean isBulkMarker(int marker) {
        return marker >= OFFER && marker <= ABORT;
    }

    public static ByteBuf offer(ByteBufAllocator alloc, long token, int port) {
        return alloc.buffer(17).writeInt(13).writeByte(OFFER).writeLong(token).writeInt(port);
    }

    public static ByteBuf laneHello(ByteBufAllocator alloc, long token, int lane) {
        return alloc.buffer(17).writeInt(13).writeByte(LANE_HELLO).writeLong(token).writeInt(lane);
    }

    public static ByteBuf done(ByteBufAllocator alloc, int stream) {
        return alloc.buffer(9).writeInt(5).writeByte(DONE).writeInt(stream);
    }

    public static ByteBuf abort(ByteBufAllocator alloc, int stream) {
        return alloc.buffer(9).writeInt(5).writeByte(ABORT).writeInt(stream);
    }

    /** The header of a spread chunk carrying {@code dataBytes} of stream {@code stream} at {@code offset}. */
    public static ByteBuf spreadHeader(ByteBufAllocator alloc, int stream, int total, int offset, int dataBytes) {
        return alloc.buffer(SPREAD_HEADER_BYTES).writeInt(SPREAD_OVERHEAD + dataBytes).writeByte(SPREAD)
                .writeInt(stream).writeInt(total).writeInt(offset);
    }

    /**
     * Reads a spread chunk's header ({@link #SPREAD_OVERHEAD} bytes after the length prefix, positioned
     * at the marker) of a chunk carrying {@code dataBytes}; checks that the data fits in the frame.
     */
    public static SpreadHeader readSpreadHeader(ByteBuf header, int dataBytes, long maxFrameBytes) {
        if (dataBytes < 1 || dataBytes > Chunks.CHUNK_BYTES || header.readableBytes() < SPREAD_OVERHEAD) {
            throw protocol("spread chunk of " + (SPREAD_OVERHEAD + dataBytes) + " bytes is too short or too long");
        }
        header.readUnsignedByte();
        int stream = header.readInt();
        int total = header.readInt();
        int offset = header.readInt();
        if (total <= Chunks.CHUNK_BYTES || total > maxFrameBytes) {
            throw protocol("spread frame of " + total + " bytes exceeds the maximum message size of "
                    + maxFrameBytes + " bytes or is small enough to travel whole");
        }
        if (offset < 0 || (long) offset + dataBytes > total) {
            throw protocol("spread chunk at " + offset + " of " + dataBytes + " bytes exceeds its frame of "
                    + total + " bytes");
        }
        return new SpreadHeader(stream, total, offset);
    }

    /** The fields of a spread chunk. */
    public record SpreadHeader(int stream, int total, int offset) {
    }

    private static RpcException protocol(String message) {
        return new RpcException(RpcException.Code.PROTOCOL_ERROR, message);
    }
}
