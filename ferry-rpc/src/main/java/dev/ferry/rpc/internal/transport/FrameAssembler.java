package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.SharedBuffers;
import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Turns the units read from one connection into messages: whole frames are decoded at once; the
 * data of chunks ({@link Chunks}) is appended, as it arrives, to its stream's frame, which is
 * decoded when complete. Each stream's bytes go straight into the direct buffer its message will
 * own (from a {@link LargeBufferPool}), and what it carries out of band is decoded from that buffer
 * (a {@link ByteBuffer} argument is a view of it, not a copy). The socket may even read chunk data
 * into that buffer itself ({@link #directTarget}), so a large frame is not copied at all in user
 * space on its way in.
 *
 * <p>A frame's first chunk only claims its size. Where the pool's fresh memory is committed as it is
 * written ({@link LargeBufferPool#isLazy}), the buffer is the whole frame's at once: it costs what
 * arrives. Elsewhere it is taken in steps as the chunks arrive: first what the chunk brings, then,
 * whenever a chunk does not fit, twice as much (or the whole frame, if less), the bytes so far
 * copied over and the outgrown buffer given back. A frame then holds at most twice what has arrived
 * with the chunk being read (and, while it steps, the outgrown buffer), and costs one more copy of
 * at most its size, off the lazy path only.
 * (Steps rather than chunk buffers joined at the end: the frame stays in one buffer, which the socket
 * reads into and the decoder reads, as on the lazy path.)
 *
 * <pre>
 *   readFrame(unit)              a whole frame: decoded now
 *   startChunk(header, n)        a chunk of n data bytes begins: they follow, through
 *   append(bytes) / directTarget + advance(n)   until the chunk is done
 * </pre>
 *
 * <p>Not thread-safe: one instance per connection, used on its event loop.
 */
final class FrameAssembler {
    /** Large frames being received at once on one connection, at most (the sender sends fewer). */
    static final int MAX_PARTIAL = 2 * OutboundQueue.MAX_ACTIVE_LARGE;

    private final long maxFrameBytes;
    private final LargeBufferPool pool;
    private final SharedBuffers shared;
    private final Map<Integer, Partial> partials = new HashMap<>();
    /** The frame the chunk being read belongs to, or null between units. */
    private Partial current;
    private int currentStream;
    /** Data bytes of the current chunk not yet received. */
    private int chunkLeft;

    FrameAssembler(long maxFrameBytes, LargeBufferPool pool) {
        this(maxFrameBytes, pool, null);
    }

    /** @param shared the connection's shared-memory channel ({@link SharedMemoryLink}), or null */
    FrameAssembler(long maxFrameBytes, LargeBufferPool pool, SharedBuffers shared) {
        this.maxFrameBytes = maxFrameBytes;
        this.pool = pool;
        this.shared = shared;
    }

    /**
     * Decodes a whole-frame unit (length prefix removed). Does not release {@code unit}. Throws
     * {@link RpcException} (PROTOCOL_ERROR) on bad input.
     */
    InboundMessage readFrame(ByteBuf unit) {
        if (unit.readableBytes() > maxFrameBytes) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "frame of " + unit.readableBytes()
                    + " bytes exceeds the maximum message size of " + maxFrameBytes + " bytes");
        }
        return FrameCodec.decode(unit, shared);
    }

    /**
     * A chunk begins: {@code header} holds its fields after the length prefix (marker, stream,
     * total), and {@code dataBytes} of data follow.
     */
    void startChunk(ByteBuf header, int dataBytes) {
        Chunks.Header fields = Chunks.readHeader(header, dataBytes, maxFrameBytes);
        Partial partial = partials.get(fields.stream());
        if (partial == null) {
            if (partials.size() >= MAX_PARTIAL) {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "more than " + MAX_PARTIAL
                        + " chunked frames in progress on one connection");
            }
            int total = fields.total();
            partial = new Partial(total, pool.acquire(pool.isLazy(total) ? total : dataBytes));
            partials.put(fields.stream(), partial);
        } else if (partial.total != fields.total()) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "chunk of stream " + fields.stream()
                    + " says " + fields.total() + " bytes, its first chunk said " + partial.total);
        }
        if (dataBytes > partial.total - partial.filled) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "chunks of stream " + fields.stream()
                    + " exceed its " + partial.total + " bytes");
        }
        if (dataBytes > partial.bytes.capacity() - partial.filled) {
            grow(partial, dataBytes);
        }
        current = partial;
        currentStream = fields.stream();
        chunkLeft = dataBytes;
    }

    /** Whether a chunk's data is being read (the next bytes of the connection belong to it). */
    boolean inChunk() {
        return current != null;
    }

    /** Data bytes of the current chunk still to come. */
    int chunkLeft() {
        return chunkLeft;
    }

    /**
     * Moves the current chunk's next bytes from {@code in} (as many as it has, at most what the chunk
     * lacks) into its frame; the message, if that completes one.
     */
    InboundMessage append(ByteBuf in) {
        int length = Math.min(in.readableBytes(), chunkLeft);
        in.readBytes(current.bytes.limit(current.filled + length).position(current.filled));
        return advance(length);
    }

    /**
     * Where the current chunk's remaining bytes go: a view of exactly {@link #chunkLeft()} bytes of
     * its frame, for the socket to read into. Report what was read with {@link #advance}.
     */
    ByteBuffer directTarget() {
        return current.bytes.limit(current.filled + chunkLeft).position(current.filled).slice();
    }

    /** {@code length} more bytes of the current chunk are in place; the message, if that completes one. */
    InboundMessage advance(int length) {
        current.filled += length;
        chunkLeft -= length;
        if (chunkLeft > 0) {
            return null;
        }
        Partial partial = current;
        current = null;
        if (partial.filled < partial.total) {
            return null;
        }
        partials.remove(currentStream);
        return FrameCodec.decodeOwned(partial.bytes.clear(), shared);
    }

    /** Moves {@code partial} into a buffer with room for {@code dataBytes} more (see the class comment). */
    private void grow(Partial partial, int dataBytes) {
        ByteBuffer outgrown = partial.bytes;
        long size = Math.max(2L * outgrown.capacity(), (long) partial.filled + dataBytes);
        partial.bytes = pool.acquire((int) Math.min(size, partial.total)).put(0, outgrown.clear(), 0, partial.filled);
        pool.takeBack(outgrown);
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
        current = null;
        chunkLeft = 0;
    }

    private static final class Partial {
        /** The frame's size, as its chunks say. */
        final int total;
        /** Its bytes so far, at the start of a buffer of {@code total} bytes or, taken in steps, fewer. */
        ByteBuffer bytes;
        int filled;

        Partial(int total, ByteBuffer bytes) {
            this.total = total;
            this.bytes = bytes;
        }
    }
}
