package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * The accepting end of a {@link SyncLane}, as the agent sees it: requests read from it run on the
 * lane's own thread ({@link #runsRequestsInline()}), and their answers go back over it when it can
 * carry them ({@link #carries}); otherwise the agent sends the answer over its connection to the
 * peer and {@link #sendDiverted} tells the waiting caller so.
 *
 * <p>Thread-safe: an answer may be sent from the thread that completed an asynchronous handler.
 */
public final class SyncLaneConnection implements Connection {
    private static final EncodedPayload NO_PAYLOAD = new EncodedPayload(new byte[0], java.util.List.of());
    private final SyncLane lane;
    private final long maxFrameBytes;
    private volatile Object attachment;

    SyncLaneConnection(SyncLane lane, long maxFrameBytes) {
        this.lane = lane;
        this.maxFrameBytes = maxFrameBytes;
    }

    /** Whether {@code message} may go over the lane: no headers, no out-of-band buffers, not large. */
    public static boolean carries(OutboundMessage message) {
        return message.headers().isEmpty() && message.payload().outOfBand().isEmpty()
                && message.payload().totalBytes() <= SyncLanes.MAX_ANSWER_BYTES;
    }

    @Override
    public void send(OutboundMessage message, Consumer<Throwable> onFailure) {
        if (!carries(message)) {
            throw new RpcException(RpcException.Code.INTERNAL, "a lane cannot carry " + message.kind()
                    + " #" + message.id() + " (headers, out-of-band buffers or over "
                    + SyncLanes.MAX_ANSWER_BYTES + " bytes)");
        }
        write(FrameCodec.encode(message, PooledByteBufAllocator.DEFAULT, maxFrameBytes), onFailure);
    }

    /** Tells the caller waiting on this lane that the answer to call {@code id} went over the connection. */
    public void sendDiverted(long id, Consumer<Throwable> onFailure) {
        ByteBuf frame = FrameCodec.encode(new OutboundMessage(MessageKind.REPLY, id, CallHeaders.empty(),
                NO_PAYLOAD), PooledByteBufAllocator.DEFAULT, maxFrameBytes);
        FrameCodec.setFlags(frame, SyncLanes.FLAG_DIVERTED);
        write(frame, onFailure);
    }

    private synchronized void write(ByteBuf frame, Consumer<Throwable> onFailure) {
        try {
            lane.write(frame, 0);
        } catch (IOException e) {
            onFailure.accept(e);
        }
    }

    @Override
    public boolean runsRequestsInline() {
        return true;
    }

    @Override
    public boolean isActive() {
        return lane.isOpen();
    }

    @Override
    public String kind() {
        return "lane-" + lane.kind();
    }

    @Override
    public void close() {
        lane.close();
    }

    @Override
    public String remoteAddress() {
        return lane.peerAddress();
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object value) {
        attachment = value;
    }
}
