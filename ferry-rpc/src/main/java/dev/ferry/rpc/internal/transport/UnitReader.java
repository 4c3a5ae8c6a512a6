package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.BulkUnits;
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
 * frame or a chunk, {@link Chunks}) and feeds them to a {@link FrameAssembler}. Reads are composed,
 * not copied, until a unit is complete; the data of a chunk goes straight to its frame's buffer.
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
 * <p>Not thread-safe: used on the connection's event loop only.
 */
final class UnitReader extends ChannelInboundHandlerAdapter {
    /** Chunk data shorter than this is not worth a read of its own. */
    static final int MIN_DIRECT_BYTES = 16 << 10;

    private final FrameAssembler assembler;
    private final long unitLimit;
    private final Consumer<InboundMessage> deliver;
    private final BulkControl control;
    private CompositeByteBuf cumulation;
    private ByteBuf issued;
    private boolean failed;

    /**
     * @param unitLimit largest unit accepted (length prefix excluded)
     * @param deliver   receives each complete message, on the event loop
     */
    UnitReader(FrameAssembler assembler, long unitLimit, Consumer<InboundMessage> deliver) {
        this(assembler, unitLimit, deliver, BulkControl.NONE);
    }

    /** @param control handles the control units of bulk connections ({@link BulkUnits}) */
    UnitReader(FrameAssembler assembler, long unitLimit, Consumer<InboundMessage> deliver, BulkControl control) {
        this.assembler = assembler;
        this.unitLimit = unitLimit;
        this.deliver = deliver;
        this.control = control;
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
        if (failed) {
            in.release();
            return;
        }
        try {
            if (in == issued) {
                issued = null;
                int length = in.readableBytes();
                in.release();
                emit(assembler.advance(length));
                return;
            }
            cumulate(ctx.alloc(), in);
            readUnits();
        } catch (RuntimeException e) {
            failed = true;
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

    private void cumulate(ByteBufAllocator alloc, ByteBuf in) {
        if (cumulation == null) {
            cumulation = alloc.compositeBuffer(Integer.MAX_VALUE);
        }
        cumulation.addComponent(true, in);
    }

    private void readUnits() {
        CompositeByteBuf buf = cumulation;
        while (buf.isReadable()) {
            if (assembler.inChunk()) {
                emit(assembler.append(buf));
                continue;
            }
            int readable = buf.readableBytes();
            if (readable < 4) {
                break;
            }
            int at = buf.readerIndex();
            long length = buf.getUnsignedInt(at);
            if (length < 1 || length > unitLimit) {
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "unit of " + length
                        + " bytes exceeds the limit of " + unitLimit + " bytes (or is empty)");
            }
            if (readable < 5) {
                break;
            }
            int marker = buf.getUnsignedByte(at + 4);
            if (marker == Chunks.MARKER) {
                if (readable < Chunks.HEADER_BYTES) {
                    break;
                }
                buf.skipBytes(4);
                assembler.startChunk(buf.readSlice(Chunks.OVERHEAD), (int) length - Chunks.OVERHEAD);
                control.largeArriving();
                continue;
            }
            if (marker == BulkUnits.SPREAD) {
                if (readable < BulkUnits.SPREAD_HEADER_BYTES) {
                    break;
                }
                buf.skipBytes(4);
                assembler.startSpreadChunk(buf.readSlice(BulkUnits.SPREAD_OVERHEAD),
                        (int) length - BulkUnits.SPREAD_OVERHEAD);
                continue;
            }
            if (BulkUnits.isBulkMarker(marker)) {
                if (length > BulkUnits.CONTROL_MAX_BYTES) {
                    throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "bulk-connection unit of " + length
                            + " bytes is too long");
                }
                if (readable < 4 + length) {
                    break;
                }
                buf.skipBytes(5);
                control(marker, buf.readSlice((int) length - 1));
                continue;
            }
            if (readable < 4 + length) {
                break;
            }
            buf.skipBytes(4);
            ByteBuf unit = buf.readRetainedSlice((int) length);
            try {
                emit(assembler.readFrame(unit));
            } finally {
                unit.release();
            }
        }
        if (!buf.isReadable()) {
            releaseCumulation();
        } else {
            buf.discardReadComponents();
        }
    }

    private void control(int marker, ByteBuf fields) {
        try {
            switch (marker) {
                case BulkUnits.OFFER -> control.offer(fields.readLong(), fields.readInt());
                case BulkUnits.LANE_HELLO -> control.laneHello(fields.readLong(), fields.readInt());
                case BulkUnits.DONE -> control.done(fields.readInt());
                case BulkUnits.ABORT -> control.abort(fields.readInt());
                default -> throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "unknown unit marker " + marker);
            }
        } catch (IndexOutOfBoundsException e) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "truncated bulk-connection unit");
        }
    }

    private void emit(InboundMessage message) {
        if (message != null) {
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
