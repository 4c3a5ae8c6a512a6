package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.BlockingAuthExchange;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Synchronous-exchange lanes: for a call whose caller waits for it alone ({@code rpcSync}), a
 * socket per pair of workers, apart from their connection, on which the caller's thread writes the
 * request and reads the answer itself while a thread of the callee, dedicated to that lane, reads
 * the request, runs it and writes the answer. A call over the connection passes through an event
 * loop and a hand-off on each side; over a lane it wakes one thread per side, as a C ping-pong
 * does. The callee's lane thread is a request thread like any other (its handler may block on a
 * nested call: answers to that come over other sockets), and while it runs one request the lane
 * carries nothing else: the caller holds it until the answer comes, and its other calls use the
 * connection.
 *
 * <pre>
 *   caller thread ──acquire──▶ lane (idle → busy) ──request──▶ callee's lane thread: run, answer
 *        ◀──────────── answer (or "diverted": it went over the connection) ──┘
 *   release (busy → idle); a lane broken, or left with an answer outstanding, is closed and reopened later
 * </pre>
 *
 * <p>Each worker listens for lanes on a Unix socket beside its connection socket (same-host peers)
 * and on a TCP port, advertised in its address as {@code ;lane=<port>}. A lane opens in the
 * background when a synchronous call finds none idle (that call and any made meanwhile use the
 * connection), up to the lanes per peer (option {@code syncLanes}, 0: none, and none accepted),
 * and starts with the opener's preface (one frame: the agent's group and name), which the
 * accepting agent checks and answers with a welcome before the lane carries a call. With
 * authentication, both ends first run the exchange connections run ({@link BlockingAuthExchange});
 * not with TLS (lanes are plain sockets).
 *
 * <p>Thread-safe. A lane accepted here has a platform thread that blocks in a selector while the
 * lane is idle (no CPU).
 */
public final class SyncLanes implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SyncLanes.class);
    /** Requests up to this size (payload bytes) may go on a lane. */
    public static final int MAX_REQUEST_BYTES = 16 << 10;
    /** Answers over this size (payload bytes) go over the connection (its chunking and shared memory). */
    public static final int MAX_ANSWER_BYTES = 256 << 10;
    /** Flag of an answer frame on a lane: the answer itself went over the connection. */
    public static final int FLAG_DIVERTED = 2;
    private static final String SOCKET_NAME = "lane.sock";
    /** Lanes open at once, both ways, beyond which accepted sockets are closed at once. */
    static final int MAX_ACCEPTED = 1024;
    /** The one-byte frame an accepting worker answers a preface with. */
    private static final byte WELCOME = 0x57;
    private static final long PREFACE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long REOPEN_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** What the transport's owner does with accepted lanes. */
    public interface Acceptor {
        /**
         * A lane was opened to this worker with {@code preface}: attach the peer to
         * {@code connection} and return true, or false to refuse it (it is closed).
         */
        boolean accepted(SyncLaneConnection connection, byte[] preface);

        /** A frame came on an accepted lane; called on the lane's thread, which may block. */
        void onMessage(SyncLaneConnection connection, InboundMessage message);
    }

    private final String bindHost;
    private final Path socketDir;
    /** This host's identity, as in addresses ({@code hostid=}): same-host peers use the Unix socket. */
    private final String localHostId;
    private final long maxFrameBytes;
    private final long spinNanos;
    private final PeerAuthentication authentication;
    private final Runnable onRejected;
    private final Acceptor acceptor;
    private final List<ServerSocketChannel> servers = new ArrayList<>();
    private final List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Set<SyncLane> open = ConcurrentHashMap.newKeySet();
    private final Map<String, PeerLanes> peers = new ConcurrentHashMap<>();
    /** Lanes this worker may open to one peer. */
    private final int lanesPerPeer;
    private final AtomicInteger laneNumbers = new AtomicInteger();
    private final LongAdder exchanges = new LongAdder();
    private volatile boolean closed;
    private volatile int tcpPort = -1;

    /**
     * @param socketDir   directory of this worker's Unix socket, or null for TCP lanes only
     * @param localHostId this host's identity in addresses
     * @param lanesPerPeer   lanes this worker may open to one peer
     * @param authentication the exchange every lane runs first (as connections do), or null
     * @param onRejected     called for each lane dropped because it failed that exchange
     */
    SyncLanes(String bindHost, Path socketDir, String localHostId, long maxFrameBytes, long spinNanos,
              int lanesPerPeer, PeerAuthentication authentication, Runnable onRejected, Acceptor acceptor) {
        this.lanesPerPeer = lanesPerPeer;
        this.authentication = authentication;
        this.onRejected = onRejected;
        this.bindHost = bindHost;
        this.socketDir = socketDir;
        this.localHostId = localHostId;
        this.maxFrameBytes = maxFrameBytes;
        this.spinNanos = spinNanos;
        this.acceptor = acceptor;
    }

    /** Starts listening; returns what to add to this worker's address ({@code ;lane=<port>}). */
    String listen() throws IOException {
        ServerSocketChannel tcp = ServerSocketChannel.open();
        servers.add(tcp);
        tcp.bind(new InetSocketAddress(bindHost, 0));
        int port = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
        tcpPort = port;
        startAccepting(tcp, "tcp");
        if (socketDir != null) {
            ServerSocketChannel uds = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            servers.add(uds);
            uds.bind(UnixDomainSocketAddress.of(socketDir.resolve(SOCKET_NAME)));
            startAccepting(uds, "uds");
        }
        return ";lane=" + port;
    }

    private void startAccepting(ServerSocketChannel server, String kind) {
        Thread thread = Thread.ofPlatform().daemon().name("ferry-lane-accept-" + kind).unstarted(() -> {
            while (!closed) {
                SocketChannel channel;
                try {
                    channel = server.accept();
                } catch (IOException e) {
                    if (!closed) {
                        log.warn("lanes: accepting on {} failed, no more {} lanes: {}", kind, kind, e.toString());
                    }
                    return;
                }
                serve(channel, kind);
            }
        });
        threads.add(thread);
        thread.start();
    }

    private void serve(SocketChannel channel, String kind) {
        if (open.size() >= MAX_ACCEPTED) {
            // Each lane holds a thread here: a peer (or anything) opening lanes without end must
            // not exhaust them. Openers fall back to their connections.
            log.warn("lanes: {} lanes open, refusing another", open.size());
            closeQuietly(channel);
            return;
        }
        Thread thread = Thread.ofPlatform().daemon().name("ferry-lane-" + laneNumbers.incrementAndGet())
                .unstarted(() -> serveLane(channel, kind));
        threads.add(thread);
        thread.start();
    }

    /** The accepted lane's thread: authentication, the preface, then every request until the lane closes. */
    private void serveLane(SocketChannel channel, String kind) {
        SyncLane lane;
        try {
            String peer = String.valueOf(channel.getRemoteAddress());
            if ("tcp".equals(kind)) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            authenticate(channel, true, peer);
            lane = new SyncLane(channel, kind, peer, maxFrameBytes, spinNanos);
        } catch (IOException | RuntimeException e) {
            log.debug("lanes: dropping an accepted {} socket: {}", kind, e.toString());
            closeQuietly(channel);
            threads.remove(Thread.currentThread());
            return;
        }
        if (!track(lane)) {
            threads.remove(Thread.currentThread());
            return;
        }
        SyncLaneConnection connection = new SyncLaneConnection(lane, maxFrameBytes);
        try {
            ByteBuf preface = lane.read(System.nanoTime() + PREFACE_TIMEOUT_NANOS);
            if (preface == null) {
                log.debug("lanes: {} sent no preface", lane.peerAddress());
                return;
            }
            byte[] bytes = new byte[preface.readableBytes()];
            preface.readBytes(bytes);
            if (!acceptor.accepted(connection, bytes)) {
                log.warn("lanes: refused a lane from {}", lane.peerAddress());
                return;
            }
            ByteBuf welcome = Unpooled.buffer(4 + 1).writeInt(1).writeByte(WELCOME);
            lane.write(welcome, System.nanoTime() + PREFACE_TIMEOUT_NANOS);
            while (!closed) {
                ByteBuf frame = lane.read(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
                if (frame != null) {
                    acceptor.onMessage(connection, FrameCodec.decode(frame));
                }
            }
        } catch (EOFException | ClosedChannelException e) {
            log.trace("lanes: {} closed", lane.peerAddress());
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                log.warn("lanes: closing the lane from {}: {}", lane.peerAddress(), e.toString());
            }
        } finally {
            lane.close();
            open.remove(lane);
            threads.remove(Thread.currentThread());
        }
    }

    /**
     * An idle lane to the worker at {@code address}, now held by the calling thread until
     * {@link #release}; or null (none open yet, all busy, or the peer has none): use the connection.
     * A call that finds no idle lane opens one more in the background (up to the lanes per peer),
     * starting with {@code preface}.
     */
    public SyncLane acquire(String address, byte[] preface) {
        PeerLanes peer = peers.get(address);
        if (peer == null) {
            if (closed) {
                return null;
            }
            peer = peers.computeIfAbsent(address, key -> new PeerLanes(key, preface));
        }
        return peer.acquire();
    }

    /** Gives back a lane from {@link #acquire}: idle again, or, if it was closed, reopened later. */
    public void release(SyncLane lane) {
        exchanges.increment();
        if (lane.slot instanceof Slot slot) {
            slot.release(lane);
        }
    }

    /** Calls sent over lanes this side opened; the lanes open, both ways; the TCP port lanes are accepted on. */
    public Map<String, String> debugInfo() {
        return Map.of("transport.lanes.exchanges", Long.toString(exchanges.sum()),
                "transport.lanes.open", Integer.toString(open.size()),
                "transport.lanes.tcp_port", Integer.toString(tcpPort));
    }

    /** Calls sent over lanes this side opened (exchanges released). */
    long exchanges() {
        return exchanges.sum();
    }

    /**
     * Runs the connections' authentication exchange ({@link BlockingAuthExchange}) on a channel
     * still in blocking mode, closing it if that takes over the exchange's timeout. Nothing without
     * authentication.
     */
    private void authenticate(SocketChannel channel, boolean accepted, String peer) throws IOException {
        if (authentication == null) {
            return;
        }
        java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CompletableFuture.delayedExecutor(authentication.timeout().toMillis(),
                TimeUnit.MILLISECONDS).execute(() -> {
                    if (finished.compareAndSet(false, true)) {
                        closeQuietly(channel); // a silent peer: the blocked read ends
                    }
                });
        try {
            BlockingAuthExchange.run(new DataInputStream(Channels.newInputStream(channel)),
                    Channels.newOutputStream(channel), authentication, accepted, peer);
        } catch (RpcException e) {
            onRejected.run();
            log.warn("lanes: {}", e.getMessage());
            throw e;
        } finally {
            finished.set(true);
        }
        if (!channel.isOpen()) {
            throw new IOException("authentication with " + peer + " timed out");
        }
    }

    private boolean track(SyncLane lane) {
        open.add(lane);
        if (closed) { // close() may have missed it
            open.remove(lane);
            lane.close();
            return false;
        }
        return true;
    }

    /**
     * Closes the listening sockets and every lane, interrupts the lanes' threads and waits (bounded)
     * for them to end.
     */
    @Override
    public void close() {
        closed = true;
        for (ServerSocketChannel server : servers) {
            closeQuietly(server);
        }
        for (SyncLane lane : open) {
            lane.close();
        }
        for (Thread thread : threads) {
            // A lane thread still in a handler (a shutdown that does not wait for them) is
            // interrupted, as request threads are.
            thread.interrupt();
        }
        for (Thread thread : threads) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (socketDir != null) {
            try {
                Files.deleteIfExists(socketDir.resolve(SOCKET_NAME));
            } catch (IOException e) {
                log.debug("cannot delete the lane socket: {}", e.toString());
            }
        }
    }

    private static void closeQuietly(java.nio.channels.Channel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** The lane to one peer, as the side that opens it sees it. */
    private final class PeerLanes {
        private final String address;
        private final byte[] preface;
        /** Where its lanes are accepted, or null: the peer offers none (or its address is bad). */
        private final NettyTransport.PeerAddress peer;
        private final List<Slot> slots = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** A lane is being opened for a busy caller: one at a time. */
        private final java.util.concurrent.atomic.AtomicBoolean growing =
                new java.util.concurrent.atomic.AtomicBoolean();

        PeerLanes(String address, byte[] preface) {
            this.address = address;
            this.preface = preface;
            NettyTransport.PeerAddress parsed;
            try {
                parsed = NettyTransport.PeerAddress.parse(address);
            } catch (RuntimeException e) {
                parsed = null;
            }
            this.peer = parsed != null && parsed.lanePort() >= 0 ? parsed : null;
        }

        SyncLane acquire() {
            if (peer == null) {
                return null;
            }
            for (Slot slot : slots) {
                SyncLane lane = slot.acquire();
                if (lane != null) {
                    return lane;
                }
            }
            if (slots.size() < lanesPerPeer && !closed && growing.compareAndSet(false, true)) {
                Slot slot = new Slot(this);
                slots.add(slot);
                slot.open();
            }
            return null;
        }
    }

    /** One lane to a peer, as the side that opens it sees it. */
    private final class Slot {
        private static final int OPENING = 0;
        private static final int IDLE = 1;
        private static final int BUSY = 2;
        private static final int BROKEN = 3;

        private final PeerLanes owner;
        private final String address;
        private final byte[] preface;
        private final AtomicInteger state = new AtomicInteger(OPENING);
        private volatile SyncLane lane;
        private volatile long reopenAt;
        /** Failed attempts to open since the last success (only the opening thread writes it). */
        private volatile int failures;

        Slot(PeerLanes owner) {
            this.owner = owner;
            this.address = owner.address;
            this.preface = owner.preface;
        }

        SyncLane acquire() {
            int current = state.get();
            if (current == IDLE && state.compareAndSet(IDLE, BUSY)) {
                SyncLane held = lane;
                if (held.isOpen()) {
                    return held;
                }
                broken(held);
                return null;
            }
            if (current == BROKEN && System.nanoTime() - reopenAt >= 0 && !closed
                    && state.compareAndSet(BROKEN, OPENING)) {
                open();
            }
            return null;
        }

        void release(SyncLane held) {
            if (held.isOpen() && !closed) {
                state.set(IDLE);
            } else {
                broken(held);
            }
        }

        private void broken(SyncLane held) {
            held.close();
            open.remove(held);
            reopenAt = System.nanoTime() + REOPEN_AFTER_NANOS;
            state.set(BROKEN);
        }

        /** Opens the lane on a thread of its own (a TCP connect may take a while). */
        void open() {
            NettyTransport.PeerAddress peer = owner.peer;
            Thread.ofVirtual().name("ferry-lane-open").start(() -> {
                SyncLane opened = null;
                try {
                    opened = connect(peer);
                    ByteBuf frame = Unpooled.buffer(4 + preface.length);
                    frame.writeInt(preface.length).writeBytes(preface);
                    opened.write(frame, System.nanoTime() + PREFACE_TIMEOUT_NANOS);
                    // Used only once the peer accepted it: a refused lane must not fail a call.
                    ByteBuf welcome = opened.read(System.nanoTime() + PREFACE_TIMEOUT_NANOS);
                    if (welcome == null || welcome.readableBytes() != 1 || welcome.readByte() != WELCOME) {
                        throw new IOException("the peer did not accept the lane");
                    }
                    opened.slot = this;
                    if (!track(opened)) {
                        state.set(BROKEN);
                        return;
                    }
                    lane = opened;
                    failures = 0;
                    state.set(IDLE);
                } catch (IOException | RuntimeException e) {
                    if (failures++ == 0) {
                        log.info("lanes: cannot open a lane to {} (calls use the connection; retried later): {}",
                                address, e.toString());
                    } else {
                        log.debug("lanes: cannot open a lane to {} ({} times): {}", address, failures, e.toString());
                    }
                    if (opened != null) {
                        opened.close();
                    }
                    // 1 s, doubling up to a minute while the peer keeps refusing
                    reopenAt = System.nanoTime() + (REOPEN_AFTER_NANOS << Math.min(6, failures - 1));
                    state.set(BROKEN);
                } finally {
                    owner.growing.set(false);
                }
            });
        }

        private SyncLane connect(NettyTransport.PeerAddress peer) throws IOException {
            if (peer.socket() != null && socketDir != null && peer.hostId() != null
                    && peer.hostId().equals(localHostId)) {
                Path socket = Path.of(peer.socket()).resolveSibling(SOCKET_NAME);
                try {
                    SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket));
                    try {
                        authenticate(channel, false, socket.toString());
                        return new SyncLane(channel, "uds", socket.toString(), maxFrameBytes, spinNanos);
                    } catch (IOException | RuntimeException e) {
                        closeQuietly(channel);
                        throw e;
                    }
                } catch (IOException e) {
                    log.debug("lanes: Unix socket {} failed, using TCP: {}", socket, e.toString());
                }
            }
            SocketChannel channel = SocketChannel.open();
            try {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.socket().connect(new InetSocketAddress(peer.host(), peer.lanePort()), 10_000);
                authenticate(channel, false, peer.host() + ":" + peer.lanePort());
                return new SyncLane(channel, "tcp", peer.host() + ":" + peer.lanePort(), maxFrameBytes, spinNanos);
            } catch (IOException | RuntimeException e) {
                closeQuietly(channel);
                throw e;
            }
        }
    }

}
