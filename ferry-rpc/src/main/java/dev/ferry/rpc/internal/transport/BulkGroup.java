package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.BulkUnits;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A main connection and its bulk connections ("lanes") to the same peer: extra TCP connections,
 * each on an event loop of its own, over which large messages are spread ({@link BulkUnits}) so
 * that one message's bytes are copied by several threads at once, and small messages on the main
 * connection never wait behind them.
 *
 * <pre>
 *   opener                                   acceptor
 *   main ◀────────────── offer(token, port) ─ main           (right after accept)
 *   lane i ─ lane hello(token, i) ─────────▶ bulk port      (on demand: first large message either way)
 *   spread message: part 0 on main, part i on lane i, each in chunks at their offsets; both ways
 *   receiver ── done(stream) on main ──▶ sender             (the sender forgets the message)
 *   sender ── abort(stream) on main ──▶ receiver            (a part could not be written)
 * </pre>
 *
 * <p>Failure: a lane that closes takes with it only the spread messages that used it and are not
 * acknowledged yet: each fails once, with an error naming the lane, and the receiver is told to
 * drop it; the main connection and the other lanes stay. The opener opens missing lanes again for
 * a later large message. Lanes close with their main connection.
 *
 * <p>Bounds: at most {@link #MAX_UNACKED} spread messages are unacknowledged per group and
 * direction; further large messages wait in the main connection's queue.
 *
 * <p>This class is thread-safe.
 */
final class BulkGroup {
    private static final Logger log = LoggerFactory.getLogger(BulkGroup.class);
    /** Frames of at least this many bytes (without the length prefix) are spread when lanes are up. */
    static final int SPREAD_MIN_BYTES = 4 << 20;
    /** Spread messages sent and not acknowledged, at most, per group. */
    static final int MAX_UNACKED = OutboundQueue.MAX_ACTIVE_LARGE;
    /** Least time between two attempts to open missing lanes after a failure. */
    private static final long REOPEN_BACKOFF_NANOS = 1_000_000_000L;

    /** Opens lane {@code index} to the acceptor's bulk port; the future gives its lane once its hello is queued. */
    interface LaneOpener {
        CompletableFuture<Lane> open(BulkGroup group, int index);
    }

    private final Channel main;
    private final boolean opener;
    private final int lanesWanted;
    private final LaneOpener laneOpener;
    private final SpreadReceiver receiver;
    private final Lane[] lanes;
    private final boolean[] opening; // under this
    private final AtomicInteger nextStream = new AtomicInteger();
    private final Map<Integer, Spread> unacked = new ConcurrentHashMap<>();
    private final AtomicInteger lanePartsWriting = new AtomicInteger();
    private final AtomicLong spreadSent = new AtomicLong();
    private final AtomicLong spreadReceived = new AtomicLong();
    private volatile OutboundQueue mainQueue;
    private volatile long token;
    private volatile int port = -1;
    private volatile boolean wanted;
    private volatile boolean closed;
    private long lastFailure; // under this
    private volatile CompletableFuture<Void> allLanesUp = new CompletableFuture<>();

    /**
     * @param opener      whether this side opened the main connection (only the opener opens lanes)
     * @param lanesWanted lanes besides the main connection the opener keeps open (acceptor: at most this many accepted)
     * @param token       the acceptor's name for this group (0 on the opener until the offer arrives)
     */
    BulkGroup(Channel main, boolean opener, int lanesWanted, long token, LargeBufferPool pool, LaneOpener laneOpener) {
        this.main = main;
        this.opener = opener;
        this.lanesWanted = lanesWanted;
        this.token = token;
        this.laneOpener = laneOpener;
        this.lanes = new Lane[lanesWanted];
        this.opening = new boolean[lanesWanted];
        this.receiver = new SpreadReceiver(pool, this::sendDone);
    }

    void setMainQueue(OutboundQueue queue) {
        this.mainQueue = queue;
    }

    long token() {
        return token;
    }

    int port() {
        return port;
    }

    SpreadReceiver receiver() {
        return receiver;
    }

    Channel mainChannel() {
        return main;
    }

    /** The acceptor offered lanes (opener side, main event loop). */
    void offered(long token, int port) {
        if (!opener) {
            return;
        }
        this.token = token;
        this.port = port;
        if (wanted) {
            openMissingLanes();
        }
    }

    /** Large messages travel on this group (either way): open the lanes if this side opens them. */
    void wanted() {
        if (!opener || closed) {
            return;
        }
        wanted = true;
        if (port >= 0) {
            openMissingLanes();
        }
    }

    private void openMissingLanes() {
        List<Integer> toOpen = new ArrayList<>();
        synchronized (this) {
            if (closed || lastFailure != 0 && System.nanoTime() - lastFailure < REOPEN_BACKOFF_NANOS) {
                return;
            }
            for (int i = 0; i < lanesWanted; i++) {
                if (lanes[i] == null && !opening[i]) {
                    opening[i] = true;
                    toOpen.add(i);
                }
            }
        }
        for (int index : toOpen) {
            laneOpener.open(this, index + 1).whenComplete((lane, error) -> {
                synchronized (this) {
                    opening[index] = false;
                    if (error != null) {
                        lastFailure = System.nanoTime();
                    }
                }
                if (error != null) {
                    log.debug("cannot open bulk connection {} to {}: {}", index + 1, main.remoteAddress(), error.toString());
                } else {
                    laneUp(lane);
                }
            });
        }
    }

    /** A lane is ready to carry parts (opened, or accepted with its hello); false if the group is closed. */
    boolean laneUp(Lane lane) {
        int slot = lane.index - 1;
        if (slot < 0 || slot >= lanesWanted) {
            return false;
        }
        boolean ready;
        synchronized (this) {
            if (closed || lanes[slot] != null) {
                return false;
            }
            lanes[slot] = lane;
            ready = activeLanes().size() == lanesWanted;
        }
        lane.channel.closeFuture().addListener(f -> laneClosed(lane, lane.failure));
        if (ready) {
            allLanesUp.complete(null);
        }
        return true;
    }

    /** The lanes up now, by index. */
    synchronized List<Lane> activeLanes() {
        List<Lane> up = new ArrayList<>(lanesWanted);
        for (Lane lane : lanes) {
            if (lane != null && lane.channel.isActive()) {
                up.add(lane);
            }
        }
        return up;
    }

    /** Completes once every wanted lane is up (for tests). */
    CompletableFuture<Void> allLanesUp() {
        return allLanesUp;
    }

    /** Spread messages sent, received (for tests and diagnostics). */
    long spreadSent() {
        return spreadSent.get();
    }

    long spreadReceived() {
        return spreadReceived.get();
    }

    /** Test hook: counts from zero again. */
    void resetCounters() {
        spreadSent.set(0);
        spreadReceived.set(0);
    }

    int unackedCount() {
        return unacked.size();
    }

    /** Parts on lanes not written yet: an ordered message on the main connection waits for none. */
    int lanePartsWriting() {
        return lanePartsWriting.get();
    }

    /** Starts a spread message of {@code totalBytes}; {@code onFailure} hears once if it fails. */
    Spread begin(int totalBytes, Consumer<Throwable> onFailure, List<Lane> using) {
        Spread spread = new Spread(nextStream.getAndIncrement() & Integer.MAX_VALUE, totalBytes, onFailure, using);
        unacked.put(spread.stream, spread);
        spreadSent.incrementAndGet();
        return spread;
    }

    void lanePartQueued() {
        lanePartsWriting.incrementAndGet();
    }

    void lanePartEnded() {
        if (lanePartsWriting.decrementAndGet() == 0) {
            drainMainLater();
        }
    }

    /** The peer acknowledged {@code stream} (main event loop). */
    void done(int stream) {
        Spread spread = unacked.remove(stream);
        if (spread != null) {
            spread.ended.set(true);
            drainMainLater();
        }
    }

    /** A spread message from the peer arrived whole: acknowledge it. */
    private void sendDone(int stream) {
        spreadReceived.incrementAndGet();
        writeControl(BulkUnits.done(main.alloc(), stream));
    }

    private void writeControl(ByteBuf unit) {
        // A task of its own on the main event loop, so it never falls between a chunk's header and data.
        try {
            main.eventLoop().execute(() -> main.writeAndFlush(unit, main.voidPromise()));
        } catch (RejectedExecutionException e) {
            unit.release();
        }
    }

    private void drainMainLater() {
        OutboundQueue queue = mainQueue;
        if (queue != null) {
            try {
                main.eventLoop().execute(queue::drain);
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    }

    /** A lane closed: the unacknowledged messages that used it fail; the others go on. */
    private void laneClosed(Lane lane, Throwable cause) {
        synchronized (this) {
            if (lanes[lane.index - 1] == lane) {
                lanes[lane.index - 1] = null;
            }
            if (!closed) {
                allLanesUp = new CompletableFuture<>();
            }
        }
        for (Spread spread : new ArrayList<>(unacked.values())) {
            if (spread.using.contains(lane)) {
                spread.fail(lane.error(spread.totalBytes, cause));
            }
        }
    }

    /** The main connection closed: close the lanes, fail what is unacknowledged, drop partial messages. */
    void close(Throwable cause) {
        List<Lane> open;
        synchronized (this) {
            closed = true;
            open = new ArrayList<>();
            for (Lane lane : lanes) {
                if (lane != null) {
                    open.add(lane);
                }
            }
        }
        for (Spread spread : new ArrayList<>(unacked.values())) {
            spread.fail(cause != null ? cause : new java.nio.channels.ClosedChannelException());
        }
        receiver.clear();
        open.forEach(lane -> lane.channel.close());
    }

    /** One spread message being sent. */
    final class Spread {
        final int stream;
        final int totalBytes;
        final List<Lane> using;
        private final Consumer<Throwable> onFailure;
        private final AtomicBoolean ended = new AtomicBoolean();
        private volatile boolean failed;

        Spread(int stream, int totalBytes, Consumer<Throwable> onFailure, List<Lane> using) {
            this.stream = stream;
            this.totalBytes = totalBytes;
            this.onFailure = onFailure;
            this.using = using;
        }

        BulkGroup group() {
            return BulkGroup.this;
        }

        /** Whether it failed: its parts not written yet are dropped. */
        boolean failed() {
            return failed;
        }

        /** Fails the message once: its sender hears {@code cause}, the receiver is told to drop it. */
        void fail(Throwable cause) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            failed = true;
            unacked.remove(stream);
            if (main.isActive()) {
                writeControl(BulkUnits.abort(main.alloc(), stream));
            }
            drainMainLater();
            onFailure.accept(cause);
        }
    }

    /** A bulk connection: its channel, its number (1..), its send queue. */
    static final class Lane {
        final Channel channel;
        final int index;
        final int of;
        final OutboundQueue outbound;
        volatile Throwable failure;

        Lane(Channel channel, int index, int of, OutboundQueue outbound) {
            this.channel = channel;
            this.index = index;
            this.of = of;
            this.outbound = outbound;
        }

        /** The error a message fails with when this lane fails under it. */
        IOException error(int messageBytes, Throwable cause) {
            return new IOException("bulk connection " + index + " of " + of + " to " + channel.remoteAddress()
                    + " closed while a spread message of " + messageBytes + " bytes was in flight on it"
                    + (cause == null ? "" : " (" + cause + ")"), cause);
        }

        @Override
        public String toString() {
            return "Lane[" + index + " " + channel + "]";
        }
    }
}
