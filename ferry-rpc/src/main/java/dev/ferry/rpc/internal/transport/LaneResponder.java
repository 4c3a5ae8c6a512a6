package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;

/**
 * How the answer to a call read from a lane goes back: over the lane when it may carry it
 * ({@link Lanes#carriesAnswer}), else over the lane's connection, with a note on the lane telling
 * the caller reading it that the answer went there ("diverted"). An answer the lane fails to take
 * (the caller closed it) goes over the connection too, so an answer always has a way back while
 * the connection lives.
 *
 * <p>Thread-safe: an asynchronous handler's answer comes from whatever thread completed it.
 */
final class LaneResponder implements Responder {
    private static final EncodedPayload NO_PAYLOAD = new EncodedPayload(new byte[0], List.of());

    private final SyncLane lane;
    private final NettyConnection connection;

    LaneResponder(SyncLane lane, NettyConnection connection) {
        this.lane = lane;
        this.connection = connection;
    }

    @Override
    public void respond(OutboundMessage answer, Delivery delivery, Consumer<Throwable> onFailure) {
        if (lane.isOpen() && Lanes.carriesAnswer(answer, delivery)
                && write(FrameCodec.encode(answer, PooledByteBufAllocator.DEFAULT, Lanes.MAX_ANSWER_FRAME))) {
            return;
        }
        connection.send(answer, delivery, onFailure);
        if (lane.isOpen()) {
            // After the answer: the caller, told, waits for it on the connection.
            ByteBuf note = FrameCodec.encode(new OutboundMessage(MessageKind.REPLY, answer.id(), CallHeaders.empty(),
                    NO_PAYLOAD), PooledByteBufAllocator.DEFAULT, Lanes.MAX_ANSWER_FRAME);
            FrameCodec.setFlags(note, FrameCodec.FLAG_DIVERTED);
            write(note);
        }
    }

    /** Writes {@code frame} on the lane; false if the lane would not take it (then it is closed). */
    private synchronized boolean write(ByteBuf frame) {
        try {
            lane.write(frame, 0);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public boolean isActive() {
        return connection.isActive();
    }
}
