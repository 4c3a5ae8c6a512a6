package dev.ferry.rpc.internal.wire;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;

/**
 * A connection's same-host channel for large out-of-band buffers: memory both workers map (shared
 * memory). {@link FrameCodec} copies such a buffer once into a range of the sender's memory and
 * writes only a descriptor in the frame; the receiver hands the application a view of that range.
 *
 * <pre>
 * buffer entry in a frame's buffers section, instead of (int32 n, n bytes):
 * +--------------------+-----------+--------------+--------------+
 * | int32 = DESCRIPTOR | u8 where  | int64 offset | int32 length |
 * +--------------------+-----------+--------------+--------------+
 * where: 0 = the sender's memory (the only one so far)
 *
 * control unit, in place of a whole frame (its first byte after the length is CONTROL, not the version):
 * +--------+----------------+---------+---------------------+
 * | length | u8 = CONTROL   | u8 type | type's fields       |
 * +--------+----------------+---------+---------------------+
 * </pre>
 *
 * Implementations are thread-safe: {@link #take} runs on the sending thread, the rest on the
 * connection's event loop.
 */
public interface SharedBuffers {
    /** Marks a buffer entry that is a descriptor (a length can never be negative). */
    int DESCRIPTOR = -1;
    /** First byte of a control unit (a frame's first byte is {@link FrameCodec#VERSION}, a chunk's 0xC7). */
    int CONTROL = 0xC8;
    /** Bytes of a descriptor entry after its {@link #DESCRIPTOR} marker. */
    int DESCRIPTOR_BYTES = 1 + 8 + 4;

    /** Least size of a buffer worth placing in shared memory. */
    int minBytes();

    /**
     * A free range of exactly {@code length} bytes to copy a buffer into, lent to the peer until it
     * releases it; null when there is none (not negotiated, or full): the buffer then travels in the
     * frame.
     */
    Range take(int length);

    /** Gives back a range taken for a frame that is not sent after all (its encoding failed). */
    void untake(Range range);

    /**
     * The received buffer a descriptor stands for: a view of the peer's memory. Throws
     * {@link dev.ferry.rpc.RpcException} (PROTOCOL_ERROR) for a descriptor that does not lie in it.
     */
    ByteBuffer resolve(int where, long offset, int length);

    /** A control unit arrived ({@code unit} positioned after the {@link #CONTROL} byte). */
    void control(ByteBuf unit);

    /** A lent range: where it starts in the sender's memory, and a buffer of exactly its bytes. */
    record Range(long offset, ByteBuffer memory) {
    }
}
