package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Turns the units read from one connection (length prefix already removed) into messages: whole
 * frames are decoded at once, chunks ({@link Chunks}) are appended to their stream's frame, which
 * is decoded when complete. Each stream's bytes go straight into the direct buffer its message
 * will own (from a {@link LargeBufferPool}), so a large frame is copied once on its way in, and what it carries out of band is
 * decoded from that buffer (a {@link java.nio.ByteBuffer} argument is a view of it, not a copy).
 *
 * <p>Not thread-safe: one instance per connection, used on its event loop.
 */
final class FrameAssembler {
    /** Large frames being received at once on one connection, at most (the sender sends fewer). */
    static final int MAX_PARTIAL = 2 * OutboundQueue.MAX_ACTIVE_LARGE;

    private final long maxFrameBytes;
    private final LargeBufferPool pool;
    private final Map<Integer, Partial> partials = new HashMap<>();

    FrameAssembler(long maxFrameBytes, LargeBufferPool pool) {
        this.maxFrameBytes = maxFrameBytes;
        this.pool = pool;
    }

    /**
     * The message {@code unit} completes, or null if it is a chunk of a frame still incomplete.
     * Does not release {@code unit}. Throws {@link RpcException} (PROTOCOL_ERROR) on bad input.
     */
    InboundMessage read(ByteBuf unit) {
        if (unit.isReadable() && unit.getUnsignedByte(unit.readerIndex()) == Chunks.MARKER) {
            return readChunk(unit);
        }
        if (unit.readableBytes() > maxFrameBytes) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "frame of " + unit.readableBytes()
                    + " bytes exceeds the maximum message size of " + maxFrameBytes + " bytes");
        }
        return FrameCodec.decode(unit);
    }

    private InboundMessage readChunk(ByteBuf unit) {
        Chunks.Header header = Chunks.readHeader(unit, maxFrameBytes);
        Partial partial = partials.get(header.stream());
        if (partial == null) {
            if (partials.size() >= MAX_PARTIAL) {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "more than " + MAX_PARTIAL
                        + " chunked frames in progress on one connection");
            }
            partial = new Partial(pool.acquire(header.total()));
            partials.put(header.stream(), partial);
        } else if (partial.bytes.capacity() != header.total()) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "chunk of stream " + header.stream()
                    + " says " + header.total() + " bytes, its first chunk said " + partial.bytes.capacity());
        }
        int length = unit.readableBytes();
        if (length > partial.bytes.capacity() - partial.filled) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "chunks of stream " + header.stream()
                    + " exceed its " + partial.bytes.capacity() + " bytes");
        }
        unit.readBytes(partial.bytes.limit(partial.filled + length).position(partial.filled));
        partial.filled += length;
        if (partial.filled < partial.bytes.capacity()) {
            return null;
        }
        partials.remove(header.stream());
        return FrameCodec.decodeOwned(partial.bytes.clear());
    }

    /** Bytes of incomplete frames held. */
    long partialBytes() {
        long total = 0;
        for (Partial partial : partials.values()) {
            total += partial.bytes.capacity();
        }
        return total;
    }

    /** The connection closed: drop incomplete frames. */
    void clear() {
        partials.clear();
    }

    private static final class Partial {
        final ByteBuffer bytes;
        int filled;

        Partial(ByteBuffer bytes) {
            this.bytes = bytes;
        }
    }
}
