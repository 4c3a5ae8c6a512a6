package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.unix.PeerCredentials;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * A {@link NettyTransport} channel to one peer: a Netty channel (TCP or Unix socket) with its send
 * queue, and the lanes to that peer ({@link Lanes}). Where each message goes is decided here:
 *
 * <pre>
 *   exchange(call) ── a lane may carry it ({@link Lanes#carriesRequest}) and one is idle ──▶ {@link PeerLanes}
 *        └─ otherwise, and send(message) ──▶ {@link OutboundQueue}: small frames whole, large ones in chunks
 *              ├─ alone, nothing queued ahead, small ──▶ {@link DirectWriter}: the sender's own write(2)
 *              └─ out-of-band buffers of 256 KiB or more, same host ──▶ shared memory ({@link SharedMemoryLink})
 * </pre>
 *
 * <p>Threads: {@link #send} and {@link #exchange} from any thread (ordinary ones wait, bounded,
 * while too much is queued); delivery on the channel's event loop.
 */
final class NettyConnection implements PeerChannel {
    private final Channel channel;
    private final String kind;
    private final OutboundQueue outbound;
    private final DirectWriter direct;
    /** Its lanes to the peer, or null without lanes. */
    private final PeerLanes lanes;
    /** Accepts the peer's lanes to this worker, or null without lanes. */
    private final LaneServer laneServer;
    /** What this end offered the peer (event loop), or null. */
    private LaneOffer offered;
    /** This end accepted the connection: it offers lanes only once the peer has sent a frame. */
    private final boolean accepted;
    private final SharedMemoryLink link;
    private final NettyTransport.Settings settings;
    private final LargeBufferPool receivePool;
    private final TransportListener listener;
    private volatile Object attachment;
    /** Paused by {@link #pauseReading} (the agent's throttle). */
    private volatile boolean throttled;
    /** {@link #close} was called: what is read from now on is dropped, and reading never pauses. */
    private volatile boolean closing;
    /** Why {@link #abort} closed it, or null. */
    private volatile Throwable abortCause;

    /**
     * @param link        its shared-memory channel (Unix sockets), or null
     * @param direct      lets senders write small frames to the socket themselves, or null
     * @param receivePool also lends the reused buffers large frames it sends are encoded into
     * @param laneServer  accepts the lanes the peer opens to this worker, or null without lanes
     * @param laneExchanges counts the exchanges this side's lanes carry
     * @param listener    told of every message read on it
     */
    NettyConnection(Channel channel, String kind, boolean accepted, SharedMemoryLink link, DirectWriter direct,
                    NettyTransport.Settings settings, LargeBufferPool receivePool, LaneServer laneServer,
                    java.util.concurrent.atomic.LongAdder laneExchanges, TransportListener listener) {
        this.channel = channel;
        this.kind = kind;
        this.accepted = accepted;
        this.link = link;
        this.laneServer = laneServer;
        this.lanes = laneServer == null ? null
                : new PeerLanes(this, settings.syncLanes(), settings.authentication(), settings.spinNanos(), laneExchanges);
        this.settings = settings;
        this.receivePool = receivePool;
        this.listener = listener;
        this.direct = direct;
        this.outbound = new OutboundQueue(channel, settings.sendQueueBytes(), direct);
    }

    Channel channel() {
        return channel;
    }

    /** Lets senders write small frames themselves, or null (tests). */
    DirectWriter directWriter() {
        return direct;
    }

    OutboundQueue outbound() {
        return outbound;
    }

    /** A message read on this connection (event loop): a call, answered on this connection, or anything else. */
    void deliver(InboundMessage message) {
        if (closing) {
            return; // read only to reach the peer's end-of-file (see close)
        }
        if (accepted && offered == null) {
            offerLanes();
        }
        if (message.kind() == MessageKind.CALL) {
            listener.onCall(this, message, this);
        } else {
            listener.onMessage(this, message);
        }
    }

    /**
     * The channel is active, and authenticated if connections are (its writes are held until then):
     * the end that opened it tells the peer where to open lanes to this worker (event loop). The
     * accepting end waits for the peer's first frame, so nothing that merely connects learns more
     * than that this is a Ferry worker.
     */
    void activated() {
        if (!accepted) {
            offerLanes();
        }
    }

    private void offerLanes() {
        if (laneServer != null && offered == null) {
            offered = laneServer.offer(this);
            channel.writeAndFlush(offered.encode(channel.alloc()), channel.voidPromise());
        }
    }

    /** The channel closed (event loop): its lanes close, both ways. */
    void closed() {
        if (lanes != null) {
            lanes.close();
        }
        if (offered != null) {
            laneServer.forget(offered);
        }
    }

    /** The peer offers lanes (event loop). */
    void laneOffered(LaneOffer offer) {
        if (lanes != null) {
            lanes.offered(offer);
        }
    }

    /** {@code "tcp"} or {@code "uds"}: the socket under this connection. */
    String socketKind() {
        return kind;
    }

    /** The peer's host, for lanes over TCP. */
    java.net.InetAddress remoteHost() {
        return ((java.net.InetSocketAddress) channel.remoteAddress()).getAddress();
    }

    /** Lanes this end opened that are open now (0 without lanes). */
    int openLanes() {
        return lanes == null ? 0 : lanes.openLanes();
    }

    private void applyAutoRead() {
        channel.config().setAutoRead(closing || !throttled);
    }

    @Override
    public void send(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure) {
        ByteBuf frame = encode(message, onFailure);
        if (frame != null) {
            if (delivery.alone() && message.kind() == MessageKind.CALL) {
                FrameCodec.setFlags(frame, FrameCodec.FLAG_LONE);
            }
            outbound.enqueue(frame, delivery.ordered(), delivery.alone(), onFailure);
        }
    }

    @Override
    public void exchange(OutboundMessage call, Delivery delivery, long deadlineNanos, Consumer<Throwable> onFailure) {
        if (lanes != null && !closing && Lanes.carriesRequest(call, delivery)
                && lanes.exchange(call, deadlineNanos, answer -> listener.onMessage(this, answer))) {
            return;
        }
        send(call, delivery, onFailure);
    }

    /** The frame of {@code message}, or null when the connection is closing (reported to {@code onFailure}). */
    private ByteBuf encode(OutboundMessage message, Consumer<Throwable> onFailure) {
        if (closing) {
            onFailure.accept(new ClosedChannelException());
            return null;
        }
        if (!NonBlockingThreads.currentIsNonBlocking() && !channel.eventLoop().inEventLoop()) {
            outbound.awaitRoom(settings.sendQueueTimeout());
        }
        return FrameCodec.encode(message, channel.alloc(), settings.maxFrameBytes(), receivePool::acquire, link);
    }

    @Override
    public boolean isActive() {
        return channel.isActive();
    }

    /**
     * Graceful close: what was accepted for sending is written first ({@link OutboundQueue#closeWhenDrained}),
     * then the output is shut down and this side reads on, dropping what it reads, until the peer's
     * end-of-file; the channel closes when the peer closes its end. So the peer reads everything
     * sent before the close, and neither side resets the connection with unread bytes. If the peer
     * does not finish within the settings' {@code closeTimeout} (it stopped reading, or hangs), the
     * close turns abortive: the channel closes, and what was not written fails with a TIMEOUT error
     * naming the peer, which is also the cause {@link TransportListener#onClosed} reports.
     */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        try {
            channel.eventLoop().execute(() -> {
                applyAutoRead();
                var timeout = channel.eventLoop().schedule(this::closeTimedOut,
                        settings.closeTimeout().toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
                channel.closeFuture().addListener(f -> timeout.cancel(false));
            });
        } catch (RejectedExecutionException e) {
            // the event loop is shutting down: the channel closes with it
        }
        outbound.closeWhenDrained();
    }

    @Override
    public void abort(Throwable cause) {
        closing = true;
        try {
            channel.eventLoop().execute(() -> {
                if (abortCause == null && channel.isOpen()) {
                    abortCause = cause;
                    // Before the close: the writes it cuts off report this cause too (OutboundQueue).
                    outbound.failAll(cause);
                    channel.close();
                }
            });
        } catch (RejectedExecutionException e) {
            channel.close();
        }
    }

    /** Why {@link #abort} closed this connection, or null. */
    Throwable abortCause() {
        return abortCause;
    }

    /** The peer did not let the close finish in time: close now, failing what is left. */
    private void closeTimedOut() {
        if (!channel.isOpen()) {
            return;
        }
        channel.pipeline().fireExceptionCaught(new RpcException(RpcException.Code.TIMEOUT, "closing the connection to "
                + channel.remoteAddress() + " timed out after " + settings.closeTimeout().toMillis()
                + " ms: the peer did not read what was sent, or did not close its end; closed abortively"));
    }

    @Override
    public void pauseReading(boolean paused) {
        if (closing) {
            return;
        }
        throttled = paused;
        channel.config().setAutoRead(!paused);
    }

    @Override
    public String kind() {
        return link != null && link.isActive() ? kind + "+shm" : kind;
    }

    @Override
    public String remoteAddress() {
        return describePeer(channel);
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
        return "Connection[" + kind + " " + channel.localAddress() + " -> " + channel.remoteAddress() + "]";
    }

    /**
     * Who is at the other end: its address, or for an accepted Unix socket (whose peer address is
     * empty) the process the kernel says it is.
     */
    static String describePeer(Channel channel) {
        if (channel instanceof EpollDomainSocketChannel unix
                && (channel.remoteAddress() == null || channel.remoteAddress().toString().isEmpty())) {
            try {
                PeerCredentials credentials = unix.peerCredentials();
                return "a local process (pid " + credentials.pid() + ", uid " + credentials.uid() + ")";
            } catch (IOException | RuntimeException e) {
                return "a local process (Unix socket)";
            }
        }
        return String.valueOf(channel.remoteAddress());
    }
}
