package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.LentMemory;
import dev.ferry.rpc.internal.wire.Loans;
import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A transport's shared-memory channel to same-host peers (TensorPipe's shm transport, with one copy
 * per direction): its own {@link SharedSegment}, the peers' segments it mapped ({@link PeerSegment}),
 * and the bookkeeping that gives ranges back. Each Unix-socket connection gets a
 * {@link SharedMemoryLink}, which negotiates and uses the channel for that connection.
 *
 * <h2>Lifecycle of a large buffer</h2>
 * <pre>
 *  sender                                             receiver
 *  copy into a range of its segment ── descriptor ──▶ view of that range (a "carrier" of its own)
 *                                                     ... the application releases it
 *                                                     (ReceivedBuffers.release / releaseAfterSend),
 *                                                     or drops it and a collection finds it
 *                                                     unreachable (phantom reference) ...
 *  range free again ◀──────────────── RELEASE ─────── the releasing thread, or the reclaimer thread
 * </pre>
 *
 * A connection may close while views of what came on it are still in use, on either side of it:
 * the receiver then sends those releases on another connection to the sender, or keeps them for
 * its next one ({@link #releaseLater}), and the sender accepts them for the ranges the closed
 * connection left orphaned ({@link SharedSegment}), so connection churn does not leak the segment.
 *
 * <p>A received view is a {@link Loans.Loan}, as a view of the receive pool is: the application
 * that releases it gives its range back at once (every view of it then throws on access, so a use
 * after release cannot read the sender's next message), and a send that refers to it pins it until
 * written. A view the application only drops comes back after a garbage collection on the receiver;
 * when a peer's views hold more than half of its segment, this side asks for one in the background
 * ({@link MemoryPressure}, the policy the receive pool shares), never on an event loop.
 *
 * <p>Thread-safe. One daemon thread, {@code ferry-shm-reclaim}, sends releases; {@link #close}
 * ends it and deletes the segment file.
 */
final class SharedMemory implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SharedMemory.class);
    /**
     * Bytes lent from which a sender that would touch fresh memory asks the peer to collect: a
     * collection (~20-40 ms on the benchmark VM) costs about as much as faulting in 64 MiB.
     */
    static final long PRESSURE_LENT_BYTES = 64L << 20;

    /**
     * What the channel is made of.
     *
     * @param segmentBytes   size of this worker's segment (0: no shared memory)
     * @param minBufferBytes out-of-band buffers at least this large go through shared memory
     * @param collect        ask for a collection when peers' views hold over half of their segment
     * @param directory      where segments are created (a memory file system)
     */
    record Settings(long segmentBytes, int minBufferBytes, boolean collect, Path directory) {
        static final int DEFAULT_MIN_BUFFER_BYTES = 256 << 10;
        static final Path DEFAULT_DIRECTORY = Path.of("/dev/shm");

        static Settings of(dev.ferry.rpc.TransportTuning tuning) {
            return new Settings(tuning.sharedMemoryBytes(), DEFAULT_MIN_BUFFER_BYTES, tuning.memoryCollections(),
                    DEFAULT_DIRECTORY);
        }

        boolean enabled() {
            return segmentBytes > 0;
        }
    }

    private final Settings settings;
    private final SharedSegment own;
    private final Map<String, PeerSegment> peers = new ConcurrentHashMap<>();
    /** Open links by the token of the peer's segment (the links whose peer sent us buffers), under this. */
    private final Map<Long, List<SharedMemoryLink>> linksByPeer = new HashMap<>();
    /** Releases for peers with no open link, by the token of their segment, under this: sent on their next link. */
    private final Map<Long, List<Long>> releasesLater = new HashMap<>();
    private final ReferenceQueue<ByteBuffer> returned = new ReferenceQueue<>();
    private final Set<View> views = ConcurrentHashMap.newKeySet();
    private final Thread reclaimer;
    private final MemoryPressure pressure;
    private volatile boolean closed;
    // Counters, for debug info and tests.
    final LongAdder sentBuffers = new LongAdder();
    final LongAdder sentBytes = new LongAdder();
    final LongAdder fallbacks = new LongAdder();
    final LongAdder receivedBuffers = new LongAdder();
    final LongAdder receivedBytes = new LongAdder();
    final LongAdder releasesSent = new LongAdder();
    final LongAdder releasesReceived = new LongAdder();
    final LongAdder pressuresSent = new LongAdder();

    private SharedMemory(Settings settings, SharedSegment own, MemoryPressure pressure) {
        this.settings = settings;
        this.own = own;
        this.pressure = pressure;
        this.reclaimer = new Thread(this::reclaimLoop, "ferry-shm-reclaim");
        reclaimer.setDaemon(true);
        reclaimer.start();
    }

    /**
     * The channel, or null when it is off or not possible here (no writable memory file system);
     * the reason is logged at debug level.
     */
    static SharedMemory create(Settings settings, MemoryPressure pressure) {
        if (!settings.enabled()) {
            return null;
        }
        try {
            if (!Files.isDirectory(settings.directory()) || !Files.isWritable(settings.directory())) {
                log.debug("no shared memory: {} is not a writable directory", settings.directory());
                return null;
            }
            return new SharedMemory(settings, SharedSegment.create(settings.directory(), settings.segmentBytes()),
                    pressure);
        } catch (IOException | RuntimeException e) {
            log.debug("no shared memory: {}", e.toString());
            return null;
        }
    }

    /** The channel of one connection (not yet negotiated). */
    SharedMemoryLink link(Channel channel) {
        return new SharedMemoryLink(this, channel);
    }

    Settings settings() {
        return settings;
    }

    SharedSegment own() {
        return own;
    }

    boolean isClosed() {
        return closed;
    }

    /** Maps (or finds mapped) a peer's announced segment; throws with the reason if it may not. */
    synchronized PeerSegment mapPeer(String path, long size, long token) throws IOException {
        String key = Path.of(path).normalize().toString();
        PeerSegment mapped = peers.get(key);
        if (mapped == null || mapped.size() != size || mapped.memory().getLong(0) != token) {
            mapped = PeerSegment.map(key, size, token, own);
            peers.put(key, mapped);
        }
        mapped.links.incrementAndGet();
        return mapped;
    }

    /**
     * A connection using {@code peer} closed: when it was the last, the mapping is forgotten (it
     * goes when the application's views of it are unreachable).
     */
    synchronized void unmapPeer(PeerSegment peer) {
        if (peer.links.decrementAndGet() == 0) {
            peers.remove(peer.path().toString(), peer);
        }
    }

    /**
     * {@code link} mapped the segment of the peer with {@code token}: releases for that peer may go
     * through it from now on, and those kept for it go now.
     */
    synchronized void linkOpened(long token, SharedMemoryLink link) {
        linksByPeer.computeIfAbsent(token, t -> new ArrayList<>()).add(link);
        List<Long> kept = releasesLater.remove(token);
        if (kept != null) {
            kept.forEach(offset -> releaseLater(token, offset));
        }
    }

    /** {@code link} (to the peer with {@code token}) closed; {@code unsent} are releases it still had. */
    synchronized void linkClosed(long token, SharedMemoryLink link, List<Long> unsent) {
        List<SharedMemoryLink> links = linksByPeer.get(token);
        if (links != null && links.remove(link) && links.isEmpty()) {
            linksByPeer.remove(token);
        }
        unsent.forEach(offset -> releaseLater(token, offset));
    }

    /**
     * Releases a range of the peer with {@code token} whose view became unreachable after the link
     * it came on closed: through another open link to that peer, or on its next one. The peer keeps
     * such a range lent until then (it cannot know we no longer read it), see {@link SharedSegment}.
     */
    synchronized void releaseLater(long token, long offset) {
        for (SharedMemoryLink link : linksByPeer.getOrDefault(token, List.of())) {
            if (link.queueRelease(offset)) {
                link.flushReleases();
                return;
            }
        }
        releasesLater.computeIfAbsent(token, t -> new ArrayList<>()).add(offset);
    }

    /** Releases kept for peers with no open link: for tests. */
    synchronized int releasesKept() {
        return releasesLater.values().stream().mapToInt(List::size).sum();
    }

    /**
     * A view of {@code length} bytes at {@code offset} of {@code peer}'s segment, to hand to the
     * application: its range goes back to the peer over {@code link} when the application releases
     * it or, failing that, when it is unreachable. May ask for a collection when the peer's views
     * hold much of its segment.
     */
    ByteBuffer lend(SharedMemoryLink link, PeerSegment peer, long offset, int length) {
        Loans.View closable = Loans.closableView(peer.memory(), (int) offset, length);
        ByteBuffer carrier = closable != null ? closable.buffer()
                : LargeBufferPool.carrier(peer.memory(), (int) offset, length);
        View view = new View(carrier, returned, link, peer, offset, length, closable);
        views.add(view);
        if (closable != null) {
            Loans.register(closable.scope(), view);
        }
        receivedBuffers.increment();
        receivedBytes.add(length);
        long outstanding = peer.outstanding.addAndGet(length);
        if (outstanding > peer.size() / 2) {
            collectSoon();
        }
        return carrier;
    }

    /**
     * The range of {@code view} goes back to its sender: queued on its link (true), or kept for the
     * sender's next link when that one closed (false; also when it went back already).
     */
    private boolean giveBack(View view) {
        if (view.scope != null) {
            Loans.unregister(view.scope);
        }
        if (!views.remove(view)) {
            return false;
        }
        view.peer.outstanding.addAndGet(-view.length);
        if (view.link.queueRelease(view.offset)) {
            return true;
        }
        releaseLater(view.link.peerToken(), view.offset);
        return false;
    }

    /**
     * The application released {@code view} and nothing sends from it: makes its views unusable,
     * then gives its range back at once. Outside any lock: closing an arena waits for every thread
     * to reach a safe point.
     */
    private void returnEarly(View view) {
        if (view.scope != null) {
            Loans.unregister(view.scope);
        }
        if (!Loans.close(view.arena)) {
            // Another thread is using a view at this very moment: the range comes back once the
            // view is unreachable, as for any view not released.
            log.debug("a released shared-memory view is in use by another thread; it returns when unreachable");
            return;
        }
        view.clear();
        if (giveBack(view)) {
            view.link.flushReleases();
        }
    }

    /** Debug info: counters and the segment. */
    Map<String, String> debugInfo() {
        Map<String, String> info = new LinkedHashMap<>();
        info.put("transport.shm.segment", own.announced() + " (" + (own.size() >> 20) + " MiB)");
        info.put("transport.shm.sent_buffers", sentBuffers.toString());
        info.put("transport.shm.sent_bytes", sentBytes.toString());
        info.put("transport.shm.fallbacks", fallbacks.toString());
        info.put("transport.shm.lent_bytes", Long.toString(own.lentBytes()));
        info.put("transport.shm.orphaned_bytes", Long.toString(own.orphanedBytes()));
        info.put("transport.shm.received_buffers", receivedBuffers.toString());
        info.put("transport.shm.received_bytes", receivedBytes.toString());
        info.put("transport.shm.releases_sent", releasesSent.toString());
        info.put("transport.shm.releases_received", releasesReceived.toString());
        info.put("transport.shm.collections", Long.toString(pressure.collections()));
        info.put("transport.shm.pressures_sent", pressuresSent.toString());
        return info;
    }

    /** Ends the reclaimer and deletes the segment file (peers' and the application's views stay valid). */
    @Override
    public void close() {
        closed = true;
        reclaimer.interrupt();
        try {
            reclaimer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            own.close();
        } catch (IOException e) {
            log.warn("cannot delete {}: {}", own.path(), e.toString());
        }
        peers.clear();
    }

    /** Asks for a collection soon ({@link MemoryPressure}): a peer's views hold much of its segment. */
    void collectSoon() {
        pressure.collectSoon(views::size);
    }

    /** Sends releases for views found unreachable, in batches per connection. */
    private void reclaimLoop() {
        List<SharedMemoryLink> touched = new ArrayList<>();
        while (!closed) {
            Reference<? extends ByteBuffer> ref;
            try {
                ref = returned.remove();
            } catch (InterruptedException e) {
                break;
            }
            do {
                View view = (View) ref;
                if (giveBack(view) && !touched.contains(view.link)) {
                    touched.add(view.link);
                }
            } while ((ref = returned.poll()) != null);
            for (SharedMemoryLink link : touched) {
                link.flushReleases();
            }
            touched.clear();
        }
    }

    /**
     * A view handed to the application: its range goes back to the peer when the application
     * releases it and no send refers to it, or when it is unreachable.
     */
    private final class View extends LentMemory {
        final SharedMemoryLink link;
        final PeerSegment peer;
        final long offset;
        final int length;
        /** The carrier's arena and scope; null where views cannot be closed (then no early return). */
        final Arena arena;
        final MemorySegment.Scope scope;

        View(ByteBuffer carrier, ReferenceQueue<ByteBuffer> queue, SharedMemoryLink link, PeerSegment peer,
             long offset, int length, Loans.View closable) {
            super(carrier, queue);
            this.link = link;
            this.peer = peer;
            this.offset = offset;
            this.length = length;
            this.arena = closable != null ? closable.arena() : null;
            this.scope = closable != null ? closable.scope() : null;
        }

        @Override
        protected void returnEarly() {
            SharedMemory.this.returnEarly(this);
        }
    }
}
