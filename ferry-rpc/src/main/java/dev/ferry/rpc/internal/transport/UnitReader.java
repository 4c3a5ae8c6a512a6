package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.InboundMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.function.Consumer;

/**
 * The first handler of a connection: splits the bytes read into units (4-byte length, then a whole
 * frame or a chunk, {@link Chunks}) and feeds them to a {@link FrameAssembler}. Whole units are
 * parsed where they were read; only a unit split between reads is kept, copied if short
 * ({@link #MERGE_LIMIT}) and composed if long; the data of a chunk goes straight to its frame's
 * buffer.
 *
 * <p>When the next bytes of the connection are known to be chunk data and nothing is buffered,
 * {@link #directTarget} gives the read loop ({@link DirectReadAllocator}) a buffer over the frame's
 * own memory, exactly as long as what the chunk lacks: the socket then reads into the frame and the
 * bytes are not copied in user space at all. Such a buffer comes back here as a normal read and is
 * recognised by identity.
 *
 * <p>Bad input (a unit over the limit, a malformed chunk) is thrown as {@link RpcException}
 * (PROTOCOL_ERROR) to the next handler's {@code exceptionCaught}, which closes the connection;
 * anything read afterwards is dropped.
 *
 * <p>On a connection this worker accepted, until the peer's first message (its HELLO) has arrived,
 * units are at most {@link #HANDSHAKE_UNIT_LIMIT} bytes and never chunks: a stranger's claims
 * cost nothing. It also counts what arrives, for the {@link StallWatch}.
 *
 * <p>Not thread-safe: used on the connection's event loop only.
 */
final class UnitReader extends ChannelInboundHandlerAdapter {
    /** The longest unit, and no chunk, before an accepted connection's first message: a HELLO is a few dozen bytes. */
    static final int HANDSHAKE_UNIT_LIMIT = 64 << 10;
    /** Chunk data shorter than this is not worth a read of its own. */
    static final int MIN_DIRECT_BYTES = 16 << 10;

    private final FrameAssembler assembler;
    private final long unitLimit;
    private final Consumer<InboundMessage> deliver;
    private final Consumer<LaneOffer> laneOffers;
    /**
     * A kept unit at most this long is copied together from its reads; a longer one is composed. Small
     * calls then never meet a composite buffer, and the read path stays short for the JIT.
     */
    static final int MERGE_LIMIT = 64 << 10;
    private static final int MIN_CUMULATION = 256;

    /** The start of an incomplete unit (copied, or composed if long), or null. */
    private ByteBuf cumulation;
    private ByteBuf issued;
    private boolean failed;
    /** Runs when the first message arrives, or null: no handshake limits (a connection this worker opened). */
    private final Runnable onHandshakeOver;
    private boolean handshaking;
    private long received;
    private long delivered;

    /**
     * @param unitLimit  largest unit accepted (length prefix excluded)
     * @param deliver    receives each complete message, on the event loop
     * @param laneOffers receives the peer's {@link LaneOffer}
     */
    UnitReader(FrameAssembler assembler, long unitLimit, Consumer<InboundMessage> deliver,
               Consumer<LaneOffer> laneOffers) {
        this(assembler, unitLimit, deliver, laneOffers, null);
    }

    /**
     * As above, with the handshake's limits until the first message arrives, when
     * {@code onHandshakeOver} runs (on the event loop); null: no handshake.
     */
    UnitReader(FrameAssembler assembler, long unitLimit, Consumer<InboundMessage> deliver,
               Consumer<LaneOffer> laneOffers, Runnable onHandshakeOver) {
        this.assembler = assembler;
        this.unitLimit = unitLimit;
        this.deliver = deliver;
        this.laneOffers = laneOffers;
        this.onHandshakeOver = onHandshakeOver;
        this.handshaking = onHandshakeOver != null;
    }

    /** Whether this is an accepted connection whose first message has not arrived yet. */
    boolean handshaking() {
        return handshaking;
    }

    /** Bytes read so far. */
    long receivedBytes() {
        return received;
    }

    /** Messages delivered so far. */
    long deliveredMessages() {
        return delivered;
    }

    /** Whether a frame is begun and not finished: a unit kept incomplete, or a chunked frame in progress. */
    boolean midFrame() {
        return cumulation != null && cumulation.isReadable() || assembler.inChunk() || assembler.partialBytes() > 0;
    }

    /**
     * A buffer for the next read that is the current chunk's destination, or null to read into an
     * ordinary buffer. Called by the read loop just before it reads.
     */
    ByteBuf directTarget() {
        if (failed || !assembler.inChunk() || assembler.chunkLeft() < MIN_DIRECT_BYTES
                || cumulation != null && cumulation.isReadable()) {
            return null;
        }
        issued = Unpooled.wrappedBuffer(assembler.directTarget()).clear();
        return issued;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        received += in.readableBytes();
        if (failed) {
            in.release();
            return;
        }
        try {
            if (in == issued) {
                issued = null;
                int length = in.readableBytes();
                in.release();
                in = null;
                emit(assembler.advance(length));
                return;
            }
            if (cumulation != null) {
                ByteBuf rest = in;
                in = null;
                rest = complete(ctx.alloc(), rest);
                if (rest == null) {
                    return;
                }
                in = rest;
            }
            readUnits(in);
            if (in.isReadable()) {
                keep(ctx.alloc(), in);
            } else {
                in.release();
            }
            in = null;
        } catch (RuntimeException e) {
            failed = true;
            if (in != null) {
                in.release();
            }
            releaseCumulation();
            throw e;
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releaseCumulation();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releaseCumulation();
        ctx.fireChannelInactive();
    }

    /**
     * Keeps the start of an incomplete unit that ends a read. A small unit is copied into a buffer
     * of its own, so that whole units are always parsed from one contiguous buffer; a large one is
     * composed instead, its reads not copied.
     */
    private void keep(ByteBufAllocator alloc, ByteBuf in) {
        int needed = unitBytes(in);
        if (needed > MERGE_LIMIT) {
            CompositeByteBuf composite = alloc.compositeBuffer(Integer.MAX_VALUE);
            composite.addComponent(true, in);
            cumulation = composite;
            return;
        }
        cumulation = alloc.buffer(Math.max(needed, MIN_CUMULATION)).writeBytes(in);
        in.release();
    }

    /**
     * Feeds the kept start of a unit from {@code in}: copies just the bytes that complete it, parses
     * it, and returns what is left of {@code in} (null if nothing is: {@code in} was consumed and
     * released, or kept).
     */
    private ByteBuf complete(ByteBufAllocator alloc, ByteBuf in) {
        if (cumulation instanceof CompositeByteBuf composite) {
            composite.addComponent(true, in);
            readUnits(composite);
            if (!composite.isReadable()) {
                releaseCumulation();
            } else if (unitBytes(composite) <= MERGE_LIMIT) {
                ByteBuf copy = alloc.buffer(Math.max(unitBytes(composite), MIN_CUMULATION)).writeBytes(composite);
                releaseCumulation();
                cumulation = copy;
            } else {
                composite.discardReadComponents();
            }
            return null;
        }
        boolean composed = false;
        try {
            int missing;
            while ((missing = unitBytes(cumulation) - cumulation.readableBytes()) > 0) {
                if (!in.isReadable()) {
                    in.release();
                    return null;
                }
                if (cumulation.readableBytes() + missing > MERGE_LIMIT) {
                    CompositeByteBuf composite = alloc.compositeBuffer(Integer.MAX_VALUE);
                    composite.addComponent(true, cumulation);
                    cumulation = composite;
                    composed = true;
                    break;
                }
                cumulation.writeBytes(in, Math.min(missing, in.readableBytes()));
            }
        } catch (RuntimeException e) {
            in.release();
            throw e;
        }
        if (composed) {
            // The unit turned out long: from here on it is composed, and in belongs to it.
            return complete(alloc, in);
        }
        try {
            readUnits(cumulation);
        } catch (RuntimeException e) {
            in.release();
            throw e;
        }
        releaseCumulation();
        if (in.isReadable()) {
            return in;
        }
        in.release();
        return null;
    }

    /**
     * How many bytes, from the reader index, the next unit occupies (for a chunk, its header only):
     * 4 or 5 while its length or kind is not yet readable. Throws on a length over the limit.
     */
    private int unitBytes(ByteBuf buf) {
        int readable = buf.readableBytes();
        if (readable < 4) {
            return 4;
        }
        int at = buf.readerIndex();
        long length = buf.getUnsignedInt(at);
        if (handshaking && length > HANDSHAKE_UNIT_LIMIT) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "unit of " + length + " bytes before the"
                    + " connection's first message (at most " + HANDSHAKE_UNIT_LIMIT + " bytes until its HELLO)");
        }
        if (length < 1 || length > unitLimit) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "unit of " + length
                    + " bytes exceeds the limit of " + unitLimit + " bytes (or is empty)");
        }
        if (readable < 5) {
            return 5;
        }
        int marker = buf.getUnsignedByte(at + 4);
        if (marker == Chunks.MARKER) {
            if (handshaking) {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "a chunked frame before the connection's"
                        + " first message (its HELLO)");
            }
            return Chunks.HEADER_BYTES;
        }
        if (marker == LaneOffer.MARKER && length > LaneOffer.MAX_BYTES) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "a lane offer of " + length + " bytes");
        }
        return (int) (4 + length);
    }

    /** Parses every whole unit in {@code buf} and feeds chunk data on; leaves an incomplete unit unread. */
    private void readUnits(ByteBuf buf) {
        while (buf.isReadable()) {
            if (assembler.inChunk()) {
                emit(assembler.append(buf));
                continue;
            }
            int needed = unitBytes(buf);
            if (buf.readableBytes() < needed) {
                break;
            }
            int at = buf.readerIndex();
            int length = (int) buf.getUnsignedInt(at);
            int marker = buf.getUnsignedByte(at + 4);
            if (marker == Chunks.MARKER) {
                buf.skipBytes(4);
                assembler.startChunk(buf.readSlice(Chunks.OVERHEAD), length - Chunks.OVERHEAD);
            } else if (marker == LaneOffer.MARKER) {
                buf.skipBytes(5);
                laneOffers.accept(LaneOffer.decode(buf.readSlice(length - 1)));
            } else {
                buf.skipBytes(4);
                ByteBuf unit = buf.readRetainedSlice(length);
                try {
                    emit(assembler.readFrame(unit));
                } finally {
                    unit.release();
                }
            }
        }
    }

    private void emit(InboundMessage message) {
        if (message != null) {
            delivered++;
            if (handshaking) {
                handshaking = false;
                onHandshakeOver.run();
            }
            deliver.accept(message);
        }
    }

    private void releaseCumulation() {
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
    }
}
