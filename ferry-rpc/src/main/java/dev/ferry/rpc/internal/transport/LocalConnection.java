package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.SerializingExecutor;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * One end of an in-process connection. A send encodes on the sender's thread and queues the frame
 * on the other end, which decodes and reports it on its own transport's threads, in order.
 *
 * <p>This class is thread-safe.
 */
final class LocalConnection implements Connection {
    private static final Logger log = LoggerFactory.getLogger(LocalConnection.class);

    private final LocalTransport owner;
    private final String remoteAddress;
    // This end's events (accepted, messages, closed), one at a time, on the owner's threads.
    private final SerializingExecutor events;
    private LocalConnection peer;
    private volatile boolean open = true; // written under this
    private volatile Object attachment;

    LocalConnection(LocalTransport owner, String remoteAddress) {
        this.owner = owner;
        this.remoteAddress = remoteAddress;
        this.events = new SerializingExecutor(owner.threads());
    }

    void pair(LocalConnection other) {
        this.peer = other;
    }

    /** Queues an event of this end; false if the owner's threads have stopped. */
    boolean deliver(Runnable event) {
        try {
            events.execute(event);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    @Override
    public void send(OutboundMessage message, Consumer<Throwable> onFailure) {
        // Encoding here, as NettyTransport does, throws an oversized message at the sender.
        ByteBuf frame = FrameCodec.encode(message, ByteBufAllocator.DEFAULT, owner.maxFrameBytes());
        boolean queued;
        // Under the lock so that sends are queued in call order and none slips in after close.
        synchronized (this) {
            queued = open && peer.deliver(() -> peer.receive(frame));
        }
        if (!queued) {
            frame.release();
            onFailure.accept(new ClosedChannelException());
        }
    }

    private void receive(ByteBuf frame) {
        try {
            if (!open) {
                return; // a closed socket reads nothing more either
            }
            frame.skipBytes(4); // the length prefix, which a stream needs and a queue does not
            if (frame.readableBytes() > owner.maxFrameBytes()) {
                // The receiver's own limit, as NettyTransport's frame decoder applies it: workers
                // may be configured differently.
                throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "frame of " + frame.readableBytes()
                        + " bytes exceeds the maximum message size of " + owner.maxFrameBytes() + " bytes");
            }
            InboundMessage message = FrameCodec.decode(frame);
            owner.listener().onMessage(this, message);
        } catch (RuntimeException e) {
            log.warn("closing connection to {}: {}", remoteAddress, e.toString());
            closeWith(e);
        } finally {
            frame.release();
        }
    }

    @Override
    public boolean isActive() {
        return open;
    }

    @Override
    public void close() {
        closeWith(null);
    }

    private void closeWith(Throwable cause) {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
        }
        owner.forget(this);
        deliver(() -> owner.listener().onClosed(this, cause));
        // Behind every frame this end sent, so the peer reads them all before it sees the close.
        LocalConnection other = peer;
        other.deliver(() -> other.closeWith(null));
    }

    @Override
    public String remoteAddress() {
        return remoteAddress;
    }

    @Override
    public Object attachment() {
        return attachment;
    }

    @Override
    public void attach(Object value) {
        attachment = value;
    }

    @Override
    public String toString() {
        return "LocalConnection[-> " + remoteAddress + (open ? "" : ", closed") + "]";
    }
}
