package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.concurrent.SerializingExecutor;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * One end of an in-process connection. A send encodes on the sender's thread and queues the frame
 * on the other end, which decodes and reports it on its own transport's threads, in order.
 *
 * <p>Flow control: {@code unread} ({@link SendBudget}) counts what this end sent and the peer has not taken in
 * yet; a sender on an ordinary thread waits while it is over the transport's
 * {@code sendQueueBytes}. A paused end keeps arriving frames in {@code held} until it resumes.
 *
 * <p>This class is thread-safe.
 */
final class LocalConnection implements PeerChannel {
    private static final Logger log = LoggerFactory.getLogger(LocalConnection.class);

    private final LocalTransport owner;
    private final String remoteAddress;
    // This end's events (accepted, messages, closed), one at a time, on the owner's threads.
    private final SerializingExecutor events;
    private LocalConnection peer;
    private volatile boolean open = true; // written under this
    private volatile Object attachment;
    /** Bytes this end sent that the peer has not taken in (decoded) yet. */
    private final SendBudget unread;
    /** Frames that arrived while this end was paused, in order; touched only by its events. */
    private final ArrayDeque<ByteBuf> held = new ArrayDeque<>();
    private volatile boolean paused;
    /** The peer closed while this end held frames: it closes too once it has taken them in. */
    private volatile boolean peerClosed;

    LocalConnection(LocalTransport owner, String remoteAddress) {
        this.owner = owner;
        this.remoteAddress = remoteAddress;
        this.events = new SerializingExecutor(owner.threads());
        this.unread = new SendBudget(owner.sendQueueBytes());
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
    public void send(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure) {
        // Encoding here, as NettyTransport does, throws an oversized message at the sender.
        ByteBuf frame = ownedCopy(FrameCodec.encode(message, ByteBufAllocator.DEFAULT, owner.maxFrameBytes()));
        if (!owner.isOwnThread() && !NonBlockingThreads.currentIsNonBlocking()) {
            try {
                unread.awaitRoom(owner.sendQueueTimeout(), () -> open, remoteAddress);
            } catch (RuntimeException e) {
                frame.release();
                throw e;
            }
        }
        long size = frame.readableBytes();
        boolean queued;
        // Under the lock so that sends are queued in call order and none slips in after close.
        synchronized (this) {
            queued = open && !peerClosed && peer.deliver(() -> peer.arrived(frame));
            if (queued) {
                unread.add(size);
            }
        }
        if (!queued) {
            frame.release();
            onFailure.accept(new ClosedChannelException());
        }
    }

    /**
     * The bytes of {@code encoded} in a buffer of their own, and {@code encoded} released: copied
     * here, on the sender's thread, so the receiver decodes views of it and a large message costs
     * its receiver's delivery thread no copy (which would hold up every message behind it).
     */
    private static ByteBuf ownedCopy(ByteBuf encoded) {
        try {
            byte[] bytes = new byte[encoded.readableBytes()];
            encoded.getBytes(encoded.readerIndex(), bytes);
            return Unpooled.wrappedBuffer(bytes);
        } finally {
            encoded.release();
        }
    }

    /** The peer took in {@code bytes} this end sent. */
    private void taken(long bytes) {
        unread.add(-bytes);
        unread.signal(false);
    }

    @Override
    public void pauseReading(boolean pause) {
        paused = pause;
        if (!pause) {
            deliver(this::releaseHeld); // behind whatever is queued, in this end's order
        }
    }

    /** A frame from the peer, on this end's events: taken in now, or held while paused. */
    private void arrived(ByteBuf frame) {
        if (paused || !held.isEmpty()) {
            held.addLast(frame);
            return;
        }
        take(frame);
    }

    private void releaseHeld() {
        while (!paused && !held.isEmpty()) {
            take(held.pollFirst());
        }
        if (peerClosed && held.isEmpty()) {
            closeWith(null);
        }
    }

    /**
     * The peer closed (on this end's events, behind every frame it sent). A paused end first takes
     * in what it holds, as a socket reads what the peer wrote before its end-of-file.
     */
    private void peerClosed() {
        if (held.isEmpty()) {
            closeWith(null);
        } else {
            peerClosed = true;
        }
    }

    private void take(ByteBuf frame) {
        peer.taken(frame.readableBytes());
        receive(frame);
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
            InboundMessage message = FrameCodec.decodeOwned(frame.nioBuffer()); // views of the sender's copy
            if (message.kind() == MessageKind.CALL) {
                owner.listener().onCall(this, message, this);
            } else {
                owner.listener().onMessage(this, message);
            }
        } catch (RuntimeException e) {
            log.warn("closing connection to {}: {}", remoteAddress, e.toString());
            closeWith(e);
        } finally {
            frame.release();
        }
    }

    private void dropHeld() {
        while (!held.isEmpty()) {
            ByteBuf frame = held.pollFirst();
            peer.taken(frame.readableBytes());
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

    /** Nothing is ever unwritten here (a send hands the frame to the peer): closes with {@code cause}. */
    @Override
    public void abort(Throwable cause) {
        closeWith(cause);
    }

    private void closeWith(Throwable cause) {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
        }
        unread.signal(true); // senders waiting for room fail their sends now
        if (!deliver(this::dropHeld)) {
            dropHeld(); // no event runs any more: nothing else touches 'held'
        }
        owner.forget(this);
        deliver(() -> owner.listener().onClosed(this, cause));
        // Behind every frame this end sent, so the peer reads them all before it sees the close.
        LocalConnection other = peer;
        other.deliver(other::peerClosed);
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
