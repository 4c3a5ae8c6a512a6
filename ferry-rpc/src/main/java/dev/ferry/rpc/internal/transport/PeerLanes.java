package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.ManagedBlocking;
import dev.ferry.rpc.internal.security.BlockingAuthExchange;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * The lanes one connection's end opens to its peer ({@link Lanes}), and the exchanges on them.
 * Lanes open in the background, once the peer has offered them ({@link LaneOffer}) and a call finds
 * none idle, up to the lanes per peer; until one is idle, calls take the connection.
 *
 * <pre>
 *   slot:  OPENING ──▶ IDLE ⇄ BUSY (one exchange)
 *             └──────────┴───▶ BROKEN (open failed, the lane broke, or an answer left outstanding)
 *                               └─ after a backoff (1 s, doubling to a minute) ──▶ OPENING
 * </pre>
 *
 * <p>An exchange writes the request on the calling thread and reads the answer there too. It
 * ends when the answer comes (handed to {@code deliver}, unless it says the answer was diverted to
 * the connection), at the call's deadline (the lane is closed: its answer is outstanding), when
 * the lane breaks (the call waits for its answer on the connection, where the callee sends it when
 * the lane cannot take it), or when the thread is interrupted (a thread of its own goes on reading
 * the lane for that answer, so the call completes as it would over the connection). A request
 * that could not be written whole never reached the callee: the connection sends it instead.
 *
 * <p>Thread-safe.
 */
final class PeerLanes implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PeerLanes.class);
    private static final long HANDSHAKE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long REOPEN_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A wait with no deadline, in slices this long (the lane closing ends it sooner). */
    private static final long LONG_WAIT_NANOS = TimeUnit.HOURS.toNanos(1);

    private final NettyConnection owner;
    private final int lanesPerPeer;
    private final PeerAuthentication authentication;
    private final long spinNanos;
    private final LongAdder exchanges;
    private final List<Slot> slots = new CopyOnWriteArrayList<>();
    /** A lane is being added for a busy caller: one at a time. */
    private final AtomicBoolean growing = new AtomicBoolean();
    private volatile LaneOffer offer;
    private volatile boolean closed;

    /**
     * @param owner          the connection the lanes belong to (its peer, its kind of socket)
     * @param authentication the exchange every lane runs first, as connections do, or null
     * @param exchanges      counts the exchanges lanes carried (the transport's, for debug info)
     */
    PeerLanes(NettyConnection owner, int lanesPerPeer, PeerAuthentication authentication, long spinNanos,
              LongAdder exchanges) {
        this.owner = owner;
        this.lanesPerPeer = lanesPerPeer;
        this.authentication = authentication;
        this.spinNanos = spinNanos;
        this.exchanges = exchanges;
    }

    /** The peer accepts lanes as {@code offer} says (its connection's event loop; once). */
    void offered(LaneOffer offer) {
        if (this.offer != null) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "a second lane offer on one connection");
        }
        this.offer = offer;
    }

    /** Lanes open now, for debug info. */
    int openLanes() {
        int count = 0;
        for (Slot slot : slots) {
            count += slot.state.get() == Slot.IDLE || slot.state.get() == Slot.BUSY ? 1 : 0;
        }
        return count;
    }

    /**
     * Carries {@code call} over an idle lane, reading its answer on this thread (see the class
     * comment); false, having sent nothing, when no lane is idle.
     *
     * @param deliver receives the answer read from the lane (on this thread, or on the thread that
     *                reads it for an interrupted caller)
     */
    boolean exchange(OutboundMessage call, long deadlineNanos, Consumer<InboundMessage> deliver) {
        Slot slot = acquire();
        if (slot == null) {
            return false;
        }
        ByteBuf frame;
        try {
            frame = FrameCodec.encode(call, PooledByteBufAllocator.DEFAULT, Lanes.MAX_REQUEST_FRAME);
        } catch (RuntimeException e) {
            slot.release();
            throw e;
        }
        // Waiting on a lane is blocking on a call like any other: a request thread gives its permit
        // back meanwhile, so nested calls cannot use the permits up.
        ManagedBlocking.Permit permit = ManagedBlocking.beforeBlocking();
        try {
            try {
                slot.lane.write(frame, deadlineNanos);
            } catch (IOException e) {
                slot.broken();
                return false; // nothing whole reached the callee: the connection carries it
            }
            exchanges.increment();
            awaitAnswer(slot, call.id(), deadlineNanos, deliver, true);
            return true;
        } finally {
            ManagedBlocking.afterBlocking(permit);
        }
    }

    /**
     * Reads the answer to call {@code id} on {@code slot}'s lane until it comes, the deadline
     * passes or the lane breaks; with {@code mayLeave}, returns if the thread is interrupted, after
     * handing the lane to a thread of its own that goes on reading.
     */
    private void awaitAnswer(Slot slot, long id, long deadlineNanos, Consumer<InboundMessage> deliver,
                             boolean mayLeave) {
        SyncLane lane = slot.lane;
        try {
            while (true) {
                ByteBuf frame = lane.read(deadlineNanos != 0 ? deadlineNanos : System.nanoTime() + LONG_WAIT_NANOS);
                if (frame != null) {
                    InboundMessage answer = FrameCodec.decode(frame);
                    if (answer.id() != id) {
                        throw new IOException("an answer to call #" + answer.id() + " on the lane of call #" + id);
                    }
                    slot.release();
                    if ((answer.flags() & FrameCodec.FLAG_DIVERTED) == 0) {
                        deliver.accept(answer);
                    }
                    return;
                }
                if (deadlineNanos != 0 && System.nanoTime() - deadlineNanos >= 0) {
                    slot.broken(); // its answer may still come: not on a lane that another call uses
                    return;
                }
                if (mayLeave && Thread.currentThread().isInterrupted()) {
                    Thread.ofPlatform().daemon().name("ferry-lane-answer").start(
                            () -> awaitAnswer(slot, id, deadlineNanos, deliver, false));
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // The answer comes over the connection (the callee diverts what its lane cannot take),
            // or the connection's loss fails the call.
            log.debug("lanes: the lane of call #{} to {} broke: {}", id, owner.remoteAddress(), e.toString());
            slot.broken();
        }
    }

    /** An idle lane, now busy, or null; opens one more in the background when none is idle. */
    private Slot acquire() {
        LaneOffer offered = offer;
        if (offered == null || closed) {
            return null;
        }
        for (Slot slot : slots) {
            if (slot.acquire()) {
                return slot;
            }
        }
        if (slots.size() < lanesPerPeer && growing.compareAndSet(false, true)) {
            Slot slot = new Slot();
            slots.add(slot);
            slot.open(offered);
        }
        return null;
    }

    /** Closes every lane (the connection closed); a caller reading one wakes. */
    @Override
    public void close() {
        closed = true;
        for (Slot slot : slots) {
            slot.close();
        }
    }

    /** One lane to the peer. */
    private final class Slot {
        private static final int OPENING = 0;
        private static final int IDLE = 1;
        private static final int BUSY = 2;
        private static final int BROKEN = 3;

        private final AtomicInteger state = new AtomicInteger(OPENING);
        private volatile SyncLane lane;
        private volatile long reopenAt;
        /** Failed attempts to open since the last success (only the opening thread writes it). */
        private volatile int failures;

        boolean acquire() {
            int current = state.get();
            if (current == IDLE && state.compareAndSet(IDLE, BUSY)) {
                if (lane.isOpen()) {
                    return true;
                }
                broken();
                return false;
            }
            if (current == BROKEN && System.nanoTime() - reopenAt >= 0 && !closed
                    && state.compareAndSet(BROKEN, OPENING)) {
                open(offer);
            }
            return false;
        }

        void release() {
            if (lane.isOpen() && !closed) {
                state.set(IDLE);
            } else {
                broken();
            }
        }

        void broken() {
            SyncLane held = lane;
            if (held != null) {
                held.close();
            }
            reopenAt = System.nanoTime() + (REOPEN_AFTER_NANOS << Math.min(6, Math.max(0, failures - 1)));
            state.set(BROKEN);
        }

        void close() {
            SyncLane held = lane;
            if (held != null) {
                held.close();
            }
        }

        /** Opens the lane on a thread of its own (a TCP connect may take a while). */
        void open(LaneOffer offered) {
            Thread.ofVirtual().name("ferry-lane-open").start(() -> {
                SyncLane opened = null;
                try {
                    opened = connect(offered);
                    ByteBuf key = Unpooled.buffer(4 + LaneOffer.KEY_BYTES).writeInt(LaneOffer.KEY_BYTES)
                            .writeBytes(offered.key());
                    opened.write(key, System.nanoTime() + HANDSHAKE_TIMEOUT_NANOS);
                    // Used only once the peer accepted it: a refused lane must not fail a call.
                    ByteBuf welcome = opened.read(System.nanoTime() + HANDSHAKE_TIMEOUT_NANOS);
                    if (welcome == null || welcome.readableBytes() != 1 || welcome.readByte() != Lanes.WELCOME) {
                        throw new IOException("the peer did not accept the lane");
                    }
                    lane = opened;
                    if (closed) {
                        opened.close();
                        state.set(BROKEN);
                        return;
                    }
                    failures = 0;
                    state.set(IDLE);
                } catch (IOException | RuntimeException e) {
                    if (failures++ == 0) {
                        log.info("lanes: cannot open a lane to {} (calls use the connection; retried later): {}",
                                owner.remoteAddress(), e.toString());
                    } else {
                        log.debug("lanes: cannot open a lane to {} ({} times): {}", owner.remoteAddress(), failures,
                                e.toString());
                    }
                    if (opened != null) {
                        opened.close();
                    }
                    broken();
                } finally {
                    growing.set(false);
                }
            });
        }
    }

    /** A lane to where {@code offered} says: the Unix socket if the connection is one, else TCP to its host. */
    private SyncLane connect(LaneOffer offered) throws IOException {
        boolean unix = offered.socketPath() != null && "uds".equals(owner.socketKind());
        SocketChannel channel = unix ? SocketChannel.open(UnixDomainSocketAddress.of(offered.socketPath()))
                : SocketChannel.open();
        String where = unix ? offered.socketPath() : null;
        try {
            if (!unix) {
                InetSocketAddress peer = new InetSocketAddress(owner.remoteHost(), offered.tcpPort());
                where = peer.toString();
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.socket().connect(peer, (int) TimeUnit.NANOSECONDS.toMillis(HANDSHAKE_TIMEOUT_NANOS));
            }
            authenticate(channel, where);
            return new SyncLane(channel, unix ? "uds" : "tcp", where, Lanes.MAX_ANSWER_FRAME, spinNanos);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Runs the connections' authentication exchange on a channel still in blocking mode, bounded
     * by the authentication timeout (the channel is closed if it runs over). Nothing without
     * authentication.
     */
    private void authenticate(SocketChannel channel, String peer) throws IOException {
        if (authentication == null) {
            return;
        }
        AtomicBoolean finished = new AtomicBoolean();
        java.util.concurrent.CompletableFuture.delayedExecutor(authentication.timeout().toMillis(),
                TimeUnit.MILLISECONDS).execute(() -> {
                    if (finished.compareAndSet(false, true)) {
                        try {
                            channel.close(); // a silent peer: the blocked read ends
                        } catch (IOException ignored) {
                            // closing anyway
                        }
                    }
                });
        try {
            BlockingAuthExchange.run(new DataInputStream(Channels.newInputStream(channel)),
                    Channels.newOutputStream(channel), authentication, false, peer);
        } finally {
            finished.set(true);
        }
        if (!channel.isOpen()) {
            throw new IOException("authentication with " + peer + " timed out");
        }
    }
}
