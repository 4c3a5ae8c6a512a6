package dev.ferry.rpc.internal.wire;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.serializer.BufferObject;

import java.lang.invoke.MethodHandles;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Ferry's frame format. Every frame is a 4-byte big-endian length followed by that many bytes:
 *
 * <pre>
 * +--------+---------+------+-------+--------+---------------+--------+----------+-------+------------------+
 * | length | version | kind | flags |   id   | header length | header | body len | body  | buffers          |
 * | int32  |  u8 (1) |  u8  |  u16  | int64  |    int32 H    | H bytes| int32 B  | B     | int32 K, then K x|
 * |        |         |      |       |        |               |        |          | bytes | (int32 n, n bytes)|
 * +--------+---------+------+-------+--------+---------------+--------+----------+-------+------------------+
 * flags:  bit 0  LONE      a CALL sent alone ({@link Delivery#alone}): its caller waits for this
 *                           answer and nothing else, so the callee may write it at once ({@link #FLAG_LONE})
 *         bit 1  DIVERTED  on a lane only: an empty REPLY saying that the answer to this call went
 *                           over the lane's connection instead ({@link #FLAG_DIVERTED})
 *         other bits: 0, ignored. Order is not a flag: the sending transport keeps ordered messages
 *         ({@link Delivery#ordered}) in place, and receivers deliver in arrival order
 * header: u16 count, then per entry: u8 name length, UTF-8 name, int32 value length, value bytes
 * body:   the Fory object stream (in band); buffers: the out-of-band binary buffers, in order
 * </pre>
 *
 * Ferry's own header entries (an application's interceptors add their own names):
 * <pre>
 * +---------------------+-------------------------------+----------------------------------------------+
 * | name                | value                         | meaning                                      |
 * +---------------------+-------------------------------+----------------------------------------------+
 * | ferry-deadline      | int64 nanoseconds, &gt; 0       | a CALL's time left when it was encoded (the  |
 * |                     |                               | sender's deadline; clocks differ, so not an  |
 * |                     |                               | instant). Always the first entry; the        |
 * |                     |                               | handler's nested calls end by then           |
 * |                     |                               | ({@link #DEADLINE}, not in CallHeaders)       |
 * | ferry-system        | "1"                           | one of Ferry's own calls (not counted as     |
 * |                     |                               | application work)                            |
 * | ferry-inline        | "1"                           | a system call that never blocks: run on the  |
 * |                     |                               | transport thread (honoured for those only)   |
 * | ferry-rref-create   | int32, int64, int32, int64    | remote(): the result becomes this RRef's     |
 * |                     |                               | value (RRef id, fork id)                     |
 * | ferry-rref-receiver | "1"                           | argument 0, an RRef, becomes its value       |
 * | ferry-rref-deletes  | RRef deletes riding on a call | see {@code agent/UserDeletes}                |
 * | ferry-rref-deletes- | "1"                           | some of those deletes were sent before: the  |
 * |   again             |                               | owner ignores one it has done quietly        |
 * +---------------------+-------------------------------+----------------------------------------------+
 * </pre>
 *
 * The out-of-band buffers never go through the object stream: a {@link ByteBuffer} of at least
 * {@link #REFERENCE_BYTES} is not copied at all (the frame is a composite referring to its memory),
 * anything else is copied once into the frame. A stream transport sends a frame larger than
 * {@link Chunks#CHUNK_BYTES} in chunks ({@link Chunks}), interleaved with other messages, and the
 * receiver assembles it in one direct buffer whose views the decoded message's buffers are
 * ({@link #decodeOwned}). On a connection with a shared-memory channel ({@link SharedBuffers}), a
 * large out-of-band buffer is copied into shared memory instead and its entry in the buffers section
 * is a descriptor; that connection may also carry the channel's control units, which start with
 * {@link SharedBuffers#CONTROL} where a frame has its version.
 */
public final class FrameCodec {
    public static final int VERSION = 1;
    /**
     * Flag of a CALL sent while its sender had no other call in flight on the connection: the caller
     * waits for this answer alone, so the callee may write it at once rather than batch it.
     */
    public static final int FLAG_LONE = 1;
    /** Flag of an empty REPLY on a lane: the answer to that call went over the connection. */
    public static final int FLAG_DIVERTED = 2;
    /** Where the flags are in an encoded frame: after the length, the version and the kind. */
    private static final int FLAGS_OFFSET = 4 + 1 + 1;
    /** Bytes before the header: version, kind, flags, id, header length. */
    private static final int FIXED = 1 + 1 + 2 + 8 + 4;
    private static final byte[] EMPTY_HEADERS = {0, 0};
    /**
     * The header entry of a CALL's deadline: its time left in nanoseconds when the frame was
     * encoded, an int64 greater than zero. The encoder writes it first, from
     * {@link OutboundMessage#deadline()}, and the decoder takes it out of the headers into
     * {@link InboundMessage#remainingNanos()}: a call pays neither a header object nor a lookup
     * for it.
     */
    public static final String DEADLINE = "ferry-deadline";
    private static final byte[] DEADLINE_NAME = DEADLINE.getBytes(StandardCharsets.UTF_8);
    /** The deadline entry: name length, name, value length, int64. */
    private static final int DEADLINE_ENTRY_BYTES = 1 + DEADLINE_NAME.length + 4 + 8;
    private static final Map<String, byte[]> NAME_BYTES = new java.util.concurrent.ConcurrentHashMap<>();

    static {
        // Classes that only out-of-band and large messages use, loaded now: had the JIT compiled
        // encode() before the first such message, meeting one then would deoptimize it, and its
        // recompilation (hundreds of ms of a compiler thread on a small machine) would land in the
        // middle of the first large transfers.
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            lookup.ensureInitialized(BufferSources.class);
            lookup.ensureInitialized(LoanedByteBuf.class);
            lookup.ensureInitialized(Loans.class);
            lookup.ensureInitialized(CompositeByteBuf.class);
        } catch (IllegalAccessException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private FrameCodec() {
    }

    /** Size of the frame without the length prefix. */
    public static long frameSize(OutboundMessage message, byte[] header) {
        long size = FIXED + headerLength(message, header) + 4L + message.payload().inBand().length + 4L;
        for (BufferObject buffer : message.payload().outOfBand()) {
            size += 4L + buffer.totalBytes();
        }
        return size;
    }

    /** Encodes the headers as the header section. */
    public static byte[] encodeHeaders(CallHeaders headers) {
        if (headers.isEmpty()) {
            return EMPTY_HEADERS;
        }
        int count = headers.size();
        byte[][] names = new byte[count][];
        int size = 2;
        for (int i = 0; i < count; i++) {
            names[i] = nameBytes(headers.nameAt(i));
            size += 1 + names[i].length + 4 + headers.valueAt(i).length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        out.putShort((short) count);
        for (int i = 0; i < count; i++) {
            byte[] value = headers.valueAt(i);
            out.put((byte) names[i].length).put(names[i]).putInt(value.length).put(value);
        }
        return out.array();
    }

    /** The UTF-8 bytes of a header name; the few names in use are encoded once. */
    private static byte[] nameBytes(String name) {
        byte[] bytes = NAME_BYTES.get(name);
        if (bytes == null) {
            bytes = name.getBytes(StandardCharsets.UTF_8);
            if (NAME_BYTES.size() < 1024) {
                NAME_BYTES.put(name, bytes);
            }
        }
        return bytes;
    }

    /**
     * Out-of-band {@link ByteBuffer}s of at least this many bytes are not copied into the frame: the
     * frame refers to their memory (see {@link #encode}).
     */
    public static final int REFERENCE_BYTES = 32 << 10;

    /**
     * Writes the whole frame, length prefix included. Everything is copied into one direct buffer
     * from {@code alloc}, except out-of-band {@link ByteBuffer}s of at least {@link #REFERENCE_BYTES}:
     * those are referred to, not copied (the frame is then a composite of slices of that buffer and
     * views of theirs), so their contents must not change until the frame is written.
     */
    public static ByteBuf encode(OutboundMessage message, ByteBufAllocator alloc, long maxFrameBytes) {
        return encode(message, alloc, maxFrameBytes, null);
    }

    /**
     * As {@link #encode(OutboundMessage, ByteBufAllocator, long)}, but when more than
     * {@link Chunks#CHUNK_BYTES} must be copied (a large primitive array), into a buffer from
     * {@code largeBuffers} (reused memory: fresh memory costs a page fault per page) when not null.
     */
    public static ByteBuf encode(OutboundMessage message, ByteBufAllocator alloc, long maxFrameBytes,
                                 IntFunction<ByteBuffer> largeBuffers) {
        return encode(message, alloc, maxFrameBytes, largeBuffers, null);
    }

    /**
     * As {@link #encode(OutboundMessage, ByteBufAllocator, long, IntFunction)}, and out-of-band
     * buffers of at least {@link SharedBuffers#minBytes()} are copied into a range of {@code shared}
     * (when not null and it has one free) and written as descriptors ({@link SharedBuffers}).
     */
    public static ByteBuf encode(OutboundMessage message, ByteBufAllocator alloc, long maxFrameBytes,
                                 IntFunction<ByteBuffer> largeBuffers, SharedBuffers shared) {
        byte[] header = encodeHeaders(message.headers());
        long size = frameSize(message, header);
        if (size > maxFrameBytes) {
            // Refused before it is sent: the sender's own limit (a receiver applies its own too).
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "message of " + size
                    + " bytes exceeds the maximum message size of " + maxFrameBytes + " bytes (raise"
                    + " RpcBackendOptions.Builder.maxMessageBytes on every worker, or send less at a time)");
        }
        List<BufferObject> buffers = message.payload().outOfBand();
        ByteBuffer[] referred = new ByteBuffer[buffers.size()];
        // Received memory the frame reads (Loans): pinned until copied or, when referred to,
        // until the frame is written, so that a release meanwhile cannot hand it to another message.
        Loans.Loan[] pinned = null;
        SharedBuffers.Range[] placed = shared != null && !buffers.isEmpty()
                ? new SharedBuffers.Range[referred.length] : null;
        long copied = size + 4;
        ByteBuf out = null;
        CompositeByteBuf frame = null;
        try {
            for (int i = 0; i < referred.length; i++) {
                BufferObject buffer = buffers.get(i);
                ByteBuffer lent = BufferSources.byteBufferOf(buffer);
                Loans.Loan loan = lent != null ? Loans.pinForSend(lent) : null;
                if (loan != null) {
                    if (pinned == null) {
                        pinned = new Loans.Loan[referred.length];
                    }
                    pinned[i] = loan;
                }
                if (placed != null && buffer.totalBytes() >= shared.minBytes()
                        && (placed[i] = shared.take(buffer.totalBytes())) != null) {
                    copyInto(buffer, placed[i].memory());
                    long saved = buffer.totalBytes() - (long) SharedBuffers.DESCRIPTOR_BYTES;
                    copied -= saved;
                    size -= saved;
                    continue;
                }
                ByteBuffer source = BufferSources.byteBufferOf(buffer);
                if (source != null && source.remaining() >= REFERENCE_BYTES) {
                    referred[i] = source;
                    copied -= source.remaining();
                }
            }
            out = largeBuffers != null && copied > Chunks.CHUNK_BYTES
                    ? wrapOwned(largeBuffers.apply((int) copied)).clear()
                    : alloc.directBuffer((int) copied);
            byte[] body = message.payload().inBand();
            out.writeBytes(prefix(size, message, header, body.length));
            out.writeBytes(body);
            out.writeInt(buffers.size());
            int pieceStart = 0;
            for (int i = 0; i < referred.length; i++) {
                BufferObject buffer = buffers.get(i);
                int length = buffer.totalBytes();
                if (placed != null && placed[i] != null) {
                    out.writeInt(SharedBuffers.DESCRIPTOR);
                    out.writeByte(0);
                    out.writeLong(placed[i].offset());
                    out.writeInt(length);
                    continue;
                }
                out.writeInt(length);
                ByteBuffer source = referred[i];
                if (source == null) {
                    int at = out.writerIndex();
                    buffer.writeTo(MemoryBuffer.fromByteBuffer(out.nioBuffer(at, length)));
                    out.writerIndex(at + length);
                    continue;
                }
                if (frame == null) {
                    frame = alloc.compositeDirectBuffer(2 * referred.length + 1);
                }
                byte order = BufferSources.orderByte(source);
                frame.addComponent(true, out.retainedSlice(pieceStart, out.writerIndex() - pieceStart));
                Loans.Loan loan = pinned != null ? pinned[i] : null;
                if (loan != null) {
                    pinned[i] = null; // the component unpins it once the frame is written
                    frame.addComponent(true, new LoanedByteBuf(source.duplicate(), loan, false));
                } else {
                    frame.addComponent(true, Unpooled.wrappedBuffer(source.duplicate()));
                }
                pieceStart = out.writerIndex();
                out.writeByte(order);
            }
            unpin(pinned); // what is left was copied
            if (frame == null) {
                return out;
            }
            frame.addComponent(true, out.retainedSlice(pieceStart, out.writerIndex() - pieceStart));
            out.release();
            return frame;
        } catch (RuntimeException e) {
            unpin(pinned);
            if (out != null) {
                out.release();
            }
            if (frame != null) {
                frame.release();
            }
            if (placed != null) {
                for (SharedBuffers.Range range : placed) {
                    if (range != null) {
                        shared.untake(range);
                    }
                }
            }
            throw e;
        }
    }

    /**
     * The frame's bytes before its body (length prefix, fixed fields, header section, body length),
     * put together on the heap and written to the frame at once: one bounds and reference-count
     * check instead of one per field, and a fraction of the code for the JIT to compile.
     */
    private static byte[] prefix(long size, OutboundMessage message, byte[] header, int bodyLength) {
        int headerLength = headerLength(message, header);
        byte[] prefix = new byte[4 + FIXED + headerLength + 4];
        ByteBuffer out = ByteBuffer.wrap(prefix)
                .putInt((int) size)
                .put((byte) VERSION)
                .put((byte) message.kind().code())
                .putShort((short) 0)
                .putLong(message.id())
                .putInt(headerLength);
        if (message.deadline() == 0) {
            out.put(header);
        } else {
            int count = ((header[0] & 0xff) << 8) | (header[1] & 0xff);
            if (count == 0xffff) {
                throw protocol("too many header entries for a deadline besides");
            }
            // Measured now, as late as the sender can: the time the message waited to be written counts.
            long left = Math.max(1, message.deadline() - System.nanoTime());
            out.putShort((short) (count + 1))
                    .put((byte) DEADLINE_NAME.length).put(DEADLINE_NAME).putInt(Long.BYTES).putLong(left)
                    .put(header, 2, header.length - 2);
        }
        out.putInt(bodyLength);
        return prefix;
    }

    private static int headerLength(OutboundMessage message, byte[] header) {
        return header.length + (message.deadline() == 0 ? 0 : DEADLINE_ENTRY_BYTES);
    }

    private static void unpin(Loans.Loan[] pinned) {
        if (pinned == null) {
            return;
        }
        for (int i = 0; i < pinned.length; i++) {
            if (pinned[i] != null) {
                pinned[i].unpin();
                pinned[i] = null;
            }
        }
    }

    /**
     * Wraps a buffer the frame alone will use: memory lent by a receive pool goes back as soon as
     * Netty is done with the frame, without waiting for the garbage collector.
     */
    private static ByteBuf wrapOwned(ByteBuffer buffer) {
        Loans.Loan loan = Loans.find(buffer);
        return loan != null ? new LoanedByteBuf(buffer, loan, true) : Unpooled.wrappedBuffer(buffer);
    }

    /** Copies an out-of-band buffer's bytes (for a {@link ByteBuffer}: its bytes, then its order byte). */
    private static void copyInto(BufferObject buffer, ByteBuffer target) {
        ByteBuffer source = BufferSources.byteBufferOf(buffer);
        if (source != null) {
            byte order = BufferSources.orderByte(source);
            target.duplicate().put(source.duplicate()).put(order);
        } else {
            buffer.writeTo(MemoryBuffer.fromByteBuffer(target.duplicate()));
        }
    }

    /** Sets {@code flags} in an encoded frame (its reader index at the length). */
    public static void setFlags(ByteBuf frame, int flags) {
        frame.setShort(frame.readerIndex() + FLAGS_OFFSET, flags);
    }

    /**
     * Decodes one frame (without its length prefix). Throws {@link RpcException} with
     * PROTOCOL_ERROR for anything malformed; the caller then closes the connection.
     */
    public static InboundMessage decode(ByteBuf frame) {
        return decode(frame, false, null);
    }

    /**
     * As {@link #decode(ByteBuf)} on a connection with a shared-memory channel: descriptors become
     * views of the peer's memory, and a control unit goes to {@code shared} (the result is then null).
     */
    public static InboundMessage decode(ByteBuf frame, SharedBuffers shared) {
        return decode(frame, false, shared);
    }

    /**
     * Decodes a frame held in a buffer that nothing else uses (from its position to its limit): the
     * message's buffers are views of it, not copies (for reassembled large frames, saving one copy
     * of every byte; a decoded {@link ByteBuffer} argument is then a view of the received memory).
     */
    public static InboundMessage decodeOwned(ByteBuffer frame) {
        return decode(Unpooled.wrappedBuffer(frame), true, null);
    }

    /** As {@link #decodeOwned(ByteBuffer)}, with descriptors resolved as {@link #decode(ByteBuf, SharedBuffers)} does. */
    public static InboundMessage decodeOwned(ByteBuffer frame, SharedBuffers shared) {
        return decode(Unpooled.wrappedBuffer(frame), true, shared);
    }

    private static InboundMessage decode(ByteBuf frame, boolean owned, SharedBuffers shared) {
        try {
            int version = frame.readUnsignedByte();
            if (version == SharedBuffers.CONTROL) {
                // Without a channel of its own, a worker ignores the peer's offers: it then never
                // gets an acceptance, so it never sends descriptors.
                if (shared != null) {
                    shared.control(frame);
                }
                return null;
            }
            if (version != VERSION) {
                throw protocol("unsupported frame version " + version + " (this worker speaks " + VERSION + ")");
            }
            int kindCode = frame.readUnsignedByte();
            MessageKind kind = MessageKind.of(kindCode);
            if (kind == null) {
                throw protocol("unknown message kind " + kindCode);
            }
            int flags = frame.readUnsignedShort();
            long id = frame.readLong();
            ByteBuf section = frame.readSlice(readLength(frame, "header"));
            int entries = section.readUnsignedShort();
            long remaining = 0;
            if (entries > 0 && startsWithDeadline(section)) {
                section.skipBytes(DEADLINE_ENTRY_BYTES - Long.BYTES);
                remaining = section.readLong();
                if (remaining <= 0) {
                    throw protocol("bad " + DEADLINE + " " + remaining + " (the time left must be positive)");
                }
                entries--;
            }
            CallHeaders headers = decodeHeaders(section, entries);
            ByteBuffer body = take(frame, readLength(frame, "body"), owned);
            int count = readCount(frame);
            List<ByteBuffer> buffers = count == 0 ? List.of() : new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                if (frame.getInt(frame.readerIndex()) == SharedBuffers.DESCRIPTOR) {
                    buffers.add(resolve(frame, shared));
                } else {
                    buffers.add(take(frame, readLength(frame, "buffer"), owned));
                }
            }
            if (frame.isReadable()) {
                throw protocol(frame.readableBytes() + " unexpected trailing bytes in a frame");
            }
            return new InboundMessage(kind, id, headers, body, buffers, flags, remaining);
        } catch (IndexOutOfBoundsException e) {
            throw protocol("truncated frame: " + e.getMessage());
        }
    }

    private static ByteBuffer resolve(ByteBuf frame, SharedBuffers shared) {
        if (shared == null) {
            throw protocol("a shared-memory descriptor on a connection without shared memory");
        }
        frame.skipBytes(4);
        if (frame.readableBytes() < SharedBuffers.DESCRIPTOR_BYTES) {
            throw protocol("truncated shared-memory descriptor");
        }
        int where = frame.readUnsignedByte();
        long offset = frame.readLong();
        int length = frame.readInt();
        return shared.resolve(where, offset, length);
    }

    /** Whether the header section's next entry is a well-formed {@link #DEADLINE} entry. */
    private static boolean startsWithDeadline(ByteBuf section) {
        int at = section.readerIndex();
        if (section.readableBytes() < DEADLINE_ENTRY_BYTES || section.getUnsignedByte(at) != DEADLINE_NAME.length) {
            return false;
        }
        for (int i = 0; i < DEADLINE_NAME.length; i++) {
            if (section.getByte(at + 1 + i) != DEADLINE_NAME[i]) {
                return false;
            }
        }
        return section.getInt(at + 1 + DEADLINE_NAME.length) == Long.BYTES;
    }

    /** The {@code count} entries of a header section, its count already read. */
    private static CallHeaders decodeHeaders(ByteBuf section, int count) {
        if (count == 0) {
            return CallHeaders.empty();
        }
        // Each entry takes at least a name length and a value length: a count the section cannot
        // hold is refused before arrays are sized by it.
        if (count > section.readableBytes() / (1 + 4)) {
            throw protocol("bad header count " + count + " (" + section.readableBytes() + " bytes left)");
        }
        String[] names = new String[count];
        byte[][] values = new byte[count][];
        for (int i = 0; i < count; i++) {
            int nameLength = section.readUnsignedByte();
            names[i] = section.readCharSequence(nameLength, StandardCharsets.UTF_8).toString();
            values[i] = new byte[readLength(section, "header value")];
            section.readBytes(values[i]);
        }
        return CallHeaders.ofRaw(names, values);
    }

    private static int readLength(ByteBuf in, String what) {
        int length = in.readInt();
        if (length < 0 || length > in.readableBytes()) {
            throw protocol("bad " + what + " length " + length + " (" + in.readableBytes() + " bytes left)");
        }
        return length;
    }

    private static int readCount(ByteBuf in) {
        int count = in.readInt();
        if (count < 0 || count > in.readableBytes() / 4) {
            throw protocol("bad buffer count " + count);
        }
        return count;
    }

    private static ByteBuffer take(ByteBuf frame, int length, boolean owned) {
        if (owned) {
            ByteBuffer view = frame.nioBuffer(frame.readerIndex(), length);
            frame.skipBytes(length);
            return view;
        }
        byte[] bytes = new byte[length];
        frame.readBytes(bytes);
        return ByteBuffer.wrap(bytes);
    }

    private static RpcException protocol(String message) {
        return new RpcException(RpcException.Code.PROTOCOL_ERROR, message);
    }
}
