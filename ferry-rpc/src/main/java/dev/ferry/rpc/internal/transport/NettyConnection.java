package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
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
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * A {@link NettyTransport} connection: a Netty channel (TCP or Unix socket) with its send queue,
 * and, with bulk connections, the order of what it delivers: an ordered message (one with headers)
 * is held back, with everything read after it, until the spread messages sent before it have
 * arrived whole over the lanes ({@link SpreadReceiver}), since a spread message can arrive after
 * smaller ones sent later on the main connection.
 *
 * <p>Threads: {@link #send} from any thread (ordinary ones wait, bounded, while too much is queued);
 * delivery and the held-back messages on the channel's event loop.
 */
final class NettyConnection implements Connection {
    private final Channel channel;
    private final String kind;
    private final OutboundQueue outbound;
    private final DirectWriter direct;
    /** Calls in flight each way: tells a message alone in its exchange. */
    private final CallBalance calls = new CallBalance();
    private final SharedMemoryLink link;
    /** Its bulk connections, or null without them. */
    private final BulkGroup bulk;
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
    /** The peer ended its output (bulk connections only, event loop): close once its spread messages are in. */
    private boolean inputEnded;
    /**
     * Messages held back, on the event loop only: an ordered message waiting for the spread messages
     * sent before it, and everything read after it.
     */
    private final ArrayDeque<Parked> parked = new ArrayDeque<>();

    /**
     * @param link        its shared-memory channel (Unix sockets), or null
     * @param bulk        its bulk connections, or null
     * @param direct      lets senders write small frames to the socket themselves, or null
     * @param receivePool also lends the reused buffers large frames it sends are encoded into
     * @param listener    told of every message read on it
     */
    NettyConnection(Channel channel, String kind, SharedMemoryLink link, BulkGroup bulk, DirectWriter direct,
                    NettyTransport.Settings settings, LargeBufferPool receivePool, TransportListener listener) {
        this.channel = channel;
        this.kind = kind;
        this.link = link;
        this.bulk = bulk;
        this.settings = settings;
        this.receivePool = receivePool;
        this.listener = listener;
        this.direct = direct;
        this.outbound = new OutboundQueue(channel, settings.sendQueueBytes(), bulk, direct);
        if (bulk != null) {
            bulk.setMainQueue(outbound);
        }
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

    /** Its bulk connections, or null without them. */
    BulkGroup bulk() {
        return bulk;
    }

    /** What this connection does with bulk-connection units. */
    BulkControl control() {
        if (bulk == null) {
            return BulkControl.NONE;
        }
        return new BulkControl() {
            @Override
            public void offer(long token, int port) {
                bulk.offered(token, port);
            }

            @Override
            public void done(int stream) {
                bulk.done(stream);
            }

            @Override
            public void abort(int stream) {
                bulk.receiver().abort(stream);
                pump();
            }

            @Override
            public void largeArriving() {
                bulk.wanted();
            }
        };
    }

    /** A message read on this connection (event loop). */
    void deliver(InboundMessage message) {
        calls.received(message);
        if (closing) {
            return; // read only to reach the peer's end-of-file (see close)
        }
        if (bulk == null) {
            listener.onMessage(this, message);
            return;
        }
        Set<Integer> earlier = message.headers().isEmpty() ? null : bulk.receiver().earlier();
        if (parked.isEmpty() && (earlier == null || earlier.isEmpty())) {
            listener.onMessage(this, message);
            return;
        }
        parked.add(new Parked(message, earlier, -1));
        pump();
    }

    /** A spread message arrived whole, on this connection's event loop or a lane's. */
    void deliverSpread(int stream, InboundMessage message) {
        if (!channel.eventLoop().inEventLoop()) {
            try {
                channel.eventLoop().execute(() -> deliverSpread(stream, message));
            } catch (RejectedExecutionException e) {
                // closing: the message is dropped with the connection
            }
            return;
        }
        if (closing) {
            bulk.receiver().finished(stream);
            return;
        }
        if (parked.isEmpty()) {
            bulk.receiver().finished(stream);
            listener.onMessage(this, message);
            closeIfInputDone();
            return;
        }
        // Before the first held message that waits for it (it was sent before that one), else last.
        Iterator<Parked> it = parked.iterator();
        ArrayDeque<Parked> reordered = new ArrayDeque<>(parked.size() + 1);
        boolean placed = false;
        while (it.hasNext()) {
            Parked next = it.next();
            if (!placed && next.earlier != null && next.earlier.contains(stream)) {
                reordered.add(new Parked(message, null, stream));
                placed = true;
            }
            reordered.add(next);
        }
        if (!placed) {
            reordered.add(new Parked(message, null, stream));
        }
        parked.clear();
        parked.addAll(reordered);
        pump();
    }

    /** Delivers held messages whose turn has come; reading stays off while some wait. */
    private void pump() {
        while (!parked.isEmpty()) {
            Parked head = parked.peek();
            if (head.earlier != null) {
                head.earlier.removeIf(stream -> !bulk.receiver().isPending(stream));
                if (!head.earlier.isEmpty()) {
                    applyAutoRead();
                    return;
                }
            }
            parked.poll();
            if (head.stream >= 0) {
                bulk.receiver().finished(head.stream);
            }
            listener.onMessage(this, head.message);
        }
        applyAutoRead();
        closeIfInputDone();
    }

    /**
     * The peer ended its output (event loop; only main connections with bulk connections allow
     * half-closure). Parts of spread messages it sent before may still be on their way on the
     * lanes, behind the end of the main connection: the channel closes once they have arrived
     * (the peer, which closed gracefully, waits for that), or after the close timeout with a
     * TIMEOUT error if they do not.
     */
    void inputEnded() {
        if (inputEnded) {
            return;
        }
        inputEnded = true;
        var timeout = channel.eventLoop().schedule(() -> {
            if (channel.isOpen()) {
                channel.pipeline().fireExceptionCaught(new RpcException(RpcException.Code.TIMEOUT, "the connection to "
                        + channel.remoteAddress() + " ended with large messages still arriving on its bulk"
                        + " connections; they did not arrive within " + settings.closeTimeout().toMillis() + " ms"));
            }
        }, settings.closeTimeout().toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        channel.closeFuture().addListener(f -> timeout.cancel(false));
        closeIfInputDone();
    }

    private void closeIfInputDone() {
        if (inputEnded && parked.isEmpty() && bulk.receiver().earlier().isEmpty()) {
            channel.close();
        }
    }

    /** The connection closed: what is held is delivered as it is (what it waited for will not come). */
    void releaseParked() {
        while (!parked.isEmpty()) {
            listener.onMessage(this, parked.poll().message);
        }
    }

    boolean readingPaused() {
        return throttled;
    }

    private void applyAutoRead() {
        channel.config().setAutoRead(closing || !throttled && parked.isEmpty());
    }

    @Override
    public void send(OutboundMessage message, Consumer<Throwable> onFailure) {
        ByteBuf frame = encode(message, onFailure);
        if (frame != null) {
            // Counted once encoded: a message refused here (too large) never goes, nor is answered.
            enqueue(message, frame, calls.sending(message.kind(), message.id()), onFailure);
        }
    }

    /** Sends {@code message}; {@code alone} in its exchange, its sender may write it itself (tests force it). */
    void send(OutboundMessage message, boolean alone, Consumer<Throwable> onFailure) {
        ByteBuf frame = encode(message, onFailure);
        if (frame != null) {
            enqueue(message, frame, alone, onFailure);
        }
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

    private void enqueue(OutboundMessage message, ByteBuf frame, boolean alone, Consumer<Throwable> onFailure) {
        if (alone && message.kind() == MessageKind.CALL) {
            FrameCodec.setFlags(frame, FrameCodec.FLAG_LONE);
        }
        outbound.enqueue(frame, !message.headers().isEmpty(), alone, onFailure);
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
                parked.clear();
                applyAutoRead();
                if (bulk != null) {
                    for (BulkGroup.Lane lane : bulk.activeLanes()) {
                        lane.channel.config().setAutoRead(true);
                    }
                }
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
        if (bulk == null) {
            channel.config().setAutoRead(!paused);
            return;
        }
        for (BulkGroup.Lane lane : bulk.activeLanes()) {
            lane.channel.config().setAutoRead(!paused);
        }
        if (channel.eventLoop().inEventLoop()) {
            applyAutoRead();
        } else {
            try {
                channel.eventLoop().execute(this::applyAutoRead);
            } catch (RejectedExecutionException e) {
                // closed
            }
        }
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

    /** A message held back, what it waits for (null: nothing), and its spread stream (or -1). */
    private record Parked(InboundMessage message, Set<Integer> earlier, int stream) {
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
