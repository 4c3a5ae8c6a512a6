package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.SharedBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.unix.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The shared-memory channel of one Unix-socket connection ({@link SharedMemory}): negotiates it and
 * then carries large out-of-band buffers through it, in each direction on its own.
 *
 * <h2>Negotiation</h2>
 * When the connection opens, each side announces its segment. The other side maps it (after the
 * checks of {@link PeerSegment#map}) and accepts, or refuses; a sender uses its segment only once
 * the peer accepted, so nothing is ever sent that the peer cannot read, and anything that fails
 * leaves that direction on the socket (logged at debug level).
 *
 * <pre>
 * control units (after the CONTROL byte, {@link SharedBuffers}):
 *   ANNOUNCE  u8 1, int64 token, int64 size, u16 n, n bytes UTF-8 path
 *   ACCEPT    u8 2, int64 token
 *   REFUSE    u8 3, int64 token
 *   RELEASE   u8 4, int32 count, count x int64 offset (ranges the receiver no longer uses)
 *   PRESSURE  u8 5 (the sender would rather reuse ranges than touch fresh memory: collect soon)
 * </pre>
 *
 * <h2>Trust</h2>
 * Only workers with this worker's host id talk over Unix sockets, and a segment is mapped only if it
 * belongs to this user. Still, nothing the peer says is taken on trust: a descriptor outside the
 * peer's segment, a release of a range not lent to this peer (on this connection, or
 * on one of its connections that closed), or a second announcement is a
 * protocol error that closes this connection (and fails what was in flight on it), nothing more.
 * What a same-user peer can still do is change or truncate its own file under our views (we would
 * read changed bytes, or fault on truncated pages): the channel is for workers of one job and user.
 *
 * <p>Thread-safe: {@link #take} on sending threads, {@link #queueRelease} on the reclaimer, the rest
 * on the connection's event loop.
 */
final class SharedMemoryLink implements SharedBuffers, SharedSegment.Borrower {
    private static final Logger log = LoggerFactory.getLogger(SharedMemoryLink.class);
    static final int ANNOUNCE = 1;
    static final int ACCEPT = 2;
    static final int REFUSE = 3;
    static final int RELEASE = 4;
    static final int PRESSURE = 5;
    /** Most releases in one unit. */
    static final int MAX_RELEASES_PER_UNIT = 4096;

    private final SharedMemory shared;
    private final Channel channel;
    private final ConcurrentLinkedQueue<Long> releases = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean flushDue = new AtomicBoolean();
    /** The peer accepted this side's segment: large buffers may go through it. */
    private volatile boolean sending;
    /** The peer's segment, mapped: descriptors may refer to it. */
    private volatile PeerSegment peer;
    private volatile boolean closed;
    /** Who the peer is (from its announcement), or null before it announced. */
    private volatile PeerProcess peerProcess;
    /** The token of the peer's segment mapped ({@link #peer}). */
    private volatile long mappedToken;
    private volatile long lastPressure = System.nanoTime() - MemoryPressure.MIN_INTERVAL_NANOS;

    SharedMemoryLink(SharedMemory shared, Channel channel) {
        this.shared = shared;
        this.channel = channel;
    }

    /** Whether either direction goes through shared memory. */
    boolean isActive() {
        return sending || peer != null;
    }

    /**
     * Announces this side's segment once the channel is active, and notes when it closes. Also turns
     * the channel's auto-close off: both sides now write on every connection (announcements and
     * answers), and a write that fails because the peer has just closed (it sent its messages and
     * left) would otherwise close this side at once, before it read what the peer sent first. With
     * auto-close off Netty shuts the output down instead and the channel closes at the end of input.
     * For the same reason a peer often closes with one of our control units unread, and the kernel
     * then ends our input with ECONNRESET instead of end-of-file, after everything the peer sent:
     * on a Unix socket that is an orderly close, and it is reported as one.
     */
    ChannelInboundHandlerAdapter handshake() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void handlerAdded(ChannelHandlerContext ctx) {
                ctx.channel().config().setAutoClose(false);
            }

            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                announce();
                ctx.fireChannelActive();
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                closed();
                ctx.fireChannelInactive();
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                if (cause instanceof Errors.NativeIoException e && e.expectedErr() == Errors.ERRNO_ECONNRESET_NEGATIVE) {
                    log.debug("{}: peer closed with data of ours unread", ctx.channel());
                    ctx.close();
                    return;
                }
                ctx.fireExceptionCaught(cause);
            }
        };
    }

    @Override
    public int minBytes() {
        return shared.settings().minBufferBytes();
    }

    @Override
    public Range take(int length) {
        if (!sending || closed) {
            return null;
        }
        SharedSegment.Taken taken = shared.own().take(length, this);
        if (taken == null && shared.own().orphanedBytes() >= length && shared.own().reclaimGone() >= length) {
            taken = shared.own().take(length, this); // ranges orphaned by peers that have ended
        }
        if (taken != null && closed) {
            // Closed meanwhile: the frame may never go; the range is the peer's to release, if it came.
            shared.own().orphan(this, peerProcess);
        }
        if (taken == null) {
            shared.fallbacks.increment();
            askToCollect();
            return null;
        }
        // Fresh pages cost a fault and zeroing each (~0.5 ms per MiB, twice: here and in the peer's
        // mapping); when much is lent, ranges the peer's collector would find are worth more.
        if (taken.fresh() && taken.lentBefore() >= Math.max(SharedMemory.PRESSURE_LENT_BYTES, 8L * length)) {
            askToCollect();
        }
        shared.sentBuffers.increment();
        shared.sentBytes.add(length);
        return taken.range();
    }

    @Override
    public void untake(Range range) {
        shared.own().release(range.offset(), this);
    }

    @Override
    public ByteBuffer resolve(int where, long offset, int length) {
        PeerSegment segment = peer;
        if (where != 0) {
            throw protocol("shared-memory descriptor refers to memory " + where + " (only 0, the sender's, exists)");
        }
        if (segment == null) {
            throw protocol("shared-memory descriptor before the peer's segment was accepted");
        }
        if (offset < SharedSegment.HEADER_BYTES || length < 0 || offset > segment.size() - length) {
            throw protocol("shared-memory descriptor [" + offset + ", +" + length + ") lies outside the peer's "
                    + segment.size() + "-byte segment");
        }
        return shared.lend(this, segment, offset, length);
    }

    @Override
    public void control(ByteBuf unit) {
        int type = unit.readUnsignedByte();
        switch (type) {
            case ANNOUNCE -> onAnnounce(unit);
            case ACCEPT, REFUSE -> {
                long token = unit.readLong();
                if (token != shared.own().token()) {
                    throw protocol("shared-memory answer for another segment");
                }
                if (type == ACCEPT) {
                    sending = true;
                    log.debug("{}: peer mapped {}, large buffers go through shared memory", channel,
                            shared.own().path());
                } else {
                    log.debug("{}: peer cannot map {}, large buffers go over the socket", channel, shared.own().path());
                }
            }
            case RELEASE -> onRelease(unit);
            case PRESSURE -> shared.collectSoon();
            default -> throw protocol("unknown shared-memory control unit " + type);
        }
    }

    private void announce() {
        byte[] path = shared.own().announced().getBytes(StandardCharsets.UTF_8);
        ByteBuf unit = channel.alloc().buffer(4 + 2 + 8 + 8 + 2 + path.length);
        unit.writeInt(2 + 8 + 8 + 2 + path.length);
        unit.writeByte(CONTROL).writeByte(ANNOUNCE);
        unit.writeLong(shared.own().token()).writeLong(shared.own().size());
        unit.writeShort(path.length).writeBytes(path);
        write(unit);
    }

    private void onAnnounce(ByteBuf unit) {
        long token = unit.readLong();
        long size = unit.readLong();
        int length = unit.readUnsignedShort();
        String path = unit.readCharSequence(length, StandardCharsets.UTF_8).toString();
        if (peer != null) {
            throw protocol("peer announced a second shared-memory segment");
        }
        if (peerProcess == null) {
            // Who releases what we lend on this connection (see SharedSegment), mapped or not.
            peerProcess = PeerProcess.of(token, path);
        }
        boolean accepted;
        try {
            peer = shared.mapPeer(path, size, token);
            mappedToken = token;
            shared.linkOpened(token, this);
            accepted = true;
        } catch (IOException | RuntimeException e) {
            log.debug("{}: cannot map the peer's segment {}, it sends over the socket: {}", channel, path, e.toString());
            accepted = false;
        }
        ByteBuf answer = channel.alloc().buffer(4 + 2 + 8);
        answer.writeInt(2 + 8).writeByte(CONTROL).writeByte(accepted ? ACCEPT : REFUSE).writeLong(token);
        write(answer);
    }

    private void onRelease(ByteBuf unit) {
        int count = unit.readInt();
        if (count < 0 || count > unit.readableBytes() / 8) {
            throw protocol("bad shared-memory release count " + count);
        }
        for (int i = 0; i < count; i++) {
            long offset = unit.readLong();
            String whyNot = shared.own().releaseOrWhyNot(offset, this, peerProcess);
            if (whyNot != null) {
                throw protocol("peer released shared-memory range " + offset + ", which is not lent to it (" + whyNot
                        + ")");
            }
        }
        shared.releasesReceived.add(count);
    }

    /** Asks the peer to look for unreachable views soon (at most every few milliseconds). */
    private void askToCollect() {
        long now = System.nanoTime();
        if (now - lastPressure < MemoryPressure.MIN_INTERVAL_NANOS || !shared.settings().collect()) {
            return;
        }
        lastPressure = now;
        shared.pressuresSent.increment();
        ByteBuf unit = channel.alloc().buffer(4 + 2);
        unit.writeInt(2).writeByte(CONTROL).writeByte(PRESSURE);
        write(unit);
    }

    /** A view of the peer's memory became unreachable; false if the connection is gone. */
    synchronized boolean queueRelease(long offset) {
        if (closed) {
            return false;
        }
        releases.add(offset);
        return true;
    }

    /** The token of the peer's segment mapped (known once a view of it exists). */
    long peerToken() {
        return mappedToken;
    }

    @Override
    public PeerProcess peer() {
        return peerProcess;
    }

    /** Sends the queued releases (on the event loop). */
    void flushReleases() {
        if (closed || !flushDue.compareAndSet(false, true)) {
            return;
        }
        try {
            channel.eventLoop().execute(this::writeReleases);
        } catch (RejectedExecutionException e) {
            flushDue.set(false);
        }
    }

    private void writeReleases() {
        flushDue.set(false);
        while (!releases.isEmpty() && channel.isActive()) {
            int count = Math.min(releases.size(), MAX_RELEASES_PER_UNIT);
            ByteBuf unit = channel.alloc().buffer(4 + 2 + 4 + 8 * count);
            unit.writeInt(2 + 4 + 8 * count).writeByte(CONTROL).writeByte(RELEASE).writeInt(count);
            int written = 0;
            Long offset;
            while (written < count && (offset = releases.poll()) != null) {
                unit.writeLong(offset);
                written++;
            }
            unit.setInt(0, 2 + 4 + 8 * written).setInt(4 + 2, written);
            unit.writerIndex(4 + 2 + 4 + 8 * written);
            shared.releasesSent.add(written);
            write(unit);
        }
    }

    /**
     * The connection closed. Ranges of ours lent on it are orphaned, to come back when the peer
     * releases them on another connection or its process ends ({@link SharedSegment}); releases of
     * the peer's ranges not sent yet, and those of views still in use, go on another connection to
     * it or its next one ({@link SharedMemory#releaseLater}).
     */
    private void closed() {
        List<Long> unsent = new ArrayList<>();
        synchronized (this) {
            closed = true;
            Long offset;
            while ((offset = releases.poll()) != null) {
                unsent.add(offset);
            }
        }
        sending = false;
        shared.own().orphan(this, peerProcess);
        PeerSegment segment = peer;
        if (segment != null) {
            shared.linkClosed(mappedToken, this, unsent);
            shared.unmapPeer(segment);
        }
    }

    /**
     * Writes a control unit. Not with the void promise: a failed write (the peer closed) would then
     * close this side before it read what the peer sent before closing.
     */
    private void write(ByteBuf unit) {
        channel.writeAndFlush(unit);
    }

    private static RpcException protocol(String message) {
        return new RpcException(RpcException.Code.PROTOCOL_ERROR, message);
    }
}
