package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.security.HandshakeDeadlines;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The accepting end of {@link Lanes}: listens on a TCP port and, for peers on this host, a Unix
 * socket beside the connection's, and gives each lane that proves it belongs to a live connection a
 * thread of its own ({@link #serve}).
 *
 * <h2>Before a lane proves itself</h2>
 * An accepted socket has not shown anything yet, so it costs a small fixed amount of memory, no
 * thread and a bounded time: one thread accepts every socket and drives every handshake without
 * blocking (a selector), each in two buffers of at most {@value #HANDSHAKE_BYTES} bytes; a socket
 * that has not finished within the handshake timeout (the authentication timeout) is closed, and
 * beyond {@value #MAX_HANDSHAKES} at once, or {@value #MAX_LANES} lanes open, new sockets are
 * closed at once (their openers use the connection). The handshake:
 * <pre>
 *   with a token: the connections' exchange ({@link PeerAuthentication}): hello, hello, proof, proof
 *   the opener:   a frame of 16 bytes, the key of one of this worker's connections ({@link LaneOffer})
 *   this end:     a frame of one byte, {@link Lanes#WELCOME}
 * </pre>
 * A key that belongs to no open connection closes the socket. Only then does the lane get a thread
 * (from the agent's {@code dedicated} factory), which reads its requests, each at most
 * {@link Lanes#MAX_REQUEST_FRAME} bytes, and hands them to the listener as calls of the
 * connection the key named.
 *
 * <p>Thread-safe.
 */
final class LaneServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LaneServer.class);
    static final String SOCKET_NAME = "lane.sock";
    /** Handshakes in progress at once, beyond which accepted sockets are closed at once. */
    static final int MAX_HANDSHAKES = 64;
    /** Lanes open at once (each holds a thread), beyond which accepted sockets are closed at once. */
    static final int MAX_LANES = 1024;
    /** The most a handshake buffers either way (an authentication hello). */
    static final int HANDSHAKE_BYTES = PeerAuthentication.HELLO_BYTES;

    private final String bindHost;
    private final Path socketDir;
    private final PeerAuthentication authentication;
    private final long handshakeNanos;
    private final long spinNanos;
    private final ThreadFactory dedicated;
    private final TransportListener listener;
    private final Runnable onRejected;
    private final Map<String, NettyConnection> connectionsByKey = new ConcurrentHashMap<>();
    private final Set<SyncLane> open = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final LongAdder refused = new LongAdder();
    private final Selector selector;
    private final List<ServerSocketChannel> servers = new ArrayList<>();
    private volatile boolean closed;
    private volatile int tcpPort;
    private volatile String socketPath;
    private Thread acceptor;

    /**
     * @param socketDir  directory of this worker's Unix socket, or null for TCP lanes only
     * @param authentication the exchange every lane runs first (as connections do), or null
     * @param dedicated  makes the thread each lane gets once it has proved itself
     * @param onRejected called for each lane dropped because it failed authentication
     */
    LaneServer(String bindHost, Path socketDir, PeerAuthentication authentication, Duration handshakeTimeout,
               long spinNanos, ThreadFactory dedicated, TransportListener listener, Runnable onRejected)
            throws IOException {
        this.bindHost = bindHost;
        this.socketDir = socketDir;
        this.authentication = authentication;
        this.handshakeNanos = handshakeTimeout.toNanos();
        this.spinNanos = spinNanos;
        this.dedicated = dedicated;
        this.listener = listener;
        this.onRejected = onRejected;
        this.selector = Selector.open();
    }

    /** Starts listening and accepting. */
    void listen() throws IOException {
        ServerSocketChannel tcp = ServerSocketChannel.open();
        servers.add(tcp);
        tcp.bind(new InetSocketAddress(bindHost, 0));
        tcpPort = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
        register(tcp);
        if (socketDir != null) {
            ServerSocketChannel uds = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            servers.add(uds);
            Path path = socketDir.resolve(SOCKET_NAME);
            uds.bind(UnixDomainSocketAddress.of(path));
            socketPath = path.toString();
            register(uds);
        }
        acceptor = Thread.ofPlatform().daemon().name("ferry-lane-accept").unstarted(this::acceptLoop);
        acceptor.start();
    }

    private void register(ServerSocketChannel server) throws IOException {
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
    }

    /** The offer for {@code connection}: where lanes are accepted and its new key, registered until {@link #forget}. */
    LaneOffer offer(NettyConnection connection) {
        byte[] key = LaneOffer.newKey();
        connectionsByKey.put(HexFormat.of().formatHex(key), connection);
        return new LaneOffer(tcpPort, key, "uds".equals(connection.socketKind()) ? socketPath : null);
    }

    /** {@code connection} closed: its key opens nothing more, and the lanes it accepted close. */
    void forget(LaneOffer offer) {
        NettyConnection owner = connectionsByKey.remove(HexFormat.of().formatHex(offer.key()));
        if (owner != null) {
            for (SyncLane lane : open) {
                if (lane.owner == owner) {
                    lane.close();
                }
            }
        }
    }

    /** Lanes open here, accepted sockets refused (limits, bad keys, timeouts), the TCP port. */
    Map<String, String> debugInfo() {
        return Map.of("transport.lanes.accepted_open", Integer.toString(open.size()),
                "transport.lanes.refused", Long.toString(refused.sum()),
                "transport.lanes.tcp_port", Integer.toString(tcpPort));
    }

    // ---------------------------------------------------------------- accepting and handshakes

    private void acceptLoop() {
        try {
            while (!closed) {
                selector.select(HandshakeDeadlines.selectMillis(selector, Handshake.class, Handshake::deadline));
                Iterator<SelectionKey> selected = selector.selectedKeys().iterator();
                while (selected.hasNext()) {
                    SelectionKey key = selected.next();
                    selected.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.attachment() instanceof Handshake handshake) {
                        handshake.step(key);
                    } else {
                        accept((ServerSocketChannel) key.channel());
                    }
                }
                HandshakeDeadlines.expire(selector, Handshake.class, Handshake::deadline,
                        handshake -> handshake.fail("did not finish its handshake in time", authentication != null));
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                log.warn("lanes: accepting failed, no more lanes accepted: {}", e.toString());
            }
        } finally {
            // Only this thread uses the selector: what is still in it (handshakes, the listening
            // sockets) closes here.
            for (SelectionKey key : selector.keys()) {
                closeQuietly(key.channel());
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    private void accept(ServerSocketChannel server) throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            int handshakes = selector.keys().size() - servers.size(); // cancelled ones linger briefly
            if (handshakes >= MAX_HANDSHAKES || open.size() >= MAX_LANES) {
                refused.increment();
                log.debug("lanes: {} handshakes and {} lanes open, refusing another", handshakes, open.size());
                closeQuietly(channel);
                continue;
            }
            channel.configureBlocking(false);
            if (channel.getLocalAddress() instanceof InetSocketAddress) {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            }
            Handshake handshake = new Handshake(channel, System.nanoTime() + handshakeNanos);
            channel.register(selector, SelectionKey.OP_READ | SelectionKey.OP_WRITE, handshake);
        }
    }

    /**
     * One accepted socket proving itself: a fixed buffer each way, steps driven by the selector.
     * Only the accepting thread touches it.
     */
    private final class Handshake {
        private final SocketChannel channel;
        private final long deadline;
        private final ByteBuffer out = ByteBuffer.allocate(HANDSHAKE_BYTES);
        private final ByteBuffer in = ByteBuffer.allocate(HANDSHAKE_BYTES);
        private byte[] ownNonce;
        private byte[] otherNonce;
        private Stage stage;
        /** The connection whose key the lane sent, once it did. */
        private NettyConnection owner;

        Handshake(SocketChannel channel, long deadline) {
            this.channel = channel;
            this.deadline = deadline;
            if (authentication != null) {
                ownNonce = PeerAuthentication.newNonce();
                out.putInt(PeerAuthentication.MAGIC).put(PeerAuthentication.VERSION).put(ownNonce).flip();
                expect(Stage.HELLO, PeerAuthentication.HELLO_BYTES);
            } else {
                out.flip();
                expect(Stage.KEY, 4 + LaneOffer.KEY_BYTES);
            }
        }

        long deadline() {
            return deadline;
        }

        private void expect(Stage next, int bytes) {
            stage = next;
            in.clear().limit(bytes);
        }

        void step(SelectionKey key) {
            try {
                while (true) {
                    if (out.hasRemaining() && channel.write(out) == 0) {
                        return; // the selector says when there is room
                    }
                    if (stage == Stage.WELCOMED) {
                        welcomed(key);
                        return;
                    }
                    int read = channel.read(in);
                    if (read < 0) {
                        throw new EOFException("closed during its handshake");
                    }
                    if (in.hasRemaining()) {
                        if (!out.hasRemaining()) {
                            key.interestOps(SelectionKey.OP_READ);
                        }
                        return;
                    }
                    advance(key);
                }
            } catch (IOException | RuntimeException e) {
                fail(e.getMessage(), false);
            }
        }

        /** What was expected has arrived whole. */
        private void advance(SelectionKey key) throws IOException {
            in.flip();
            switch (stage) {
                case HELLO -> {
                    if (in.getInt() != PeerAuthentication.MAGIC || in.get() != PeerAuthentication.VERSION) {
                        rejected("it did not start an authentication exchange");
                        return;
                    }
                    otherNonce = new byte[PeerAuthentication.NONCE_BYTES];
                    in.get(otherNonce);
                    out.clear().put(authentication.proof(true, ownNonce, otherNonce)).flip();
                    expect(Stage.PROOF, PeerAuthentication.PROOF_BYTES);
                }
                case PROOF -> {
                    byte[] proof = new byte[PeerAuthentication.PROOF_BYTES];
                    in.get(proof);
                    if (!authentication.verify(true, ownNonce, otherNonce, proof)) {
                        rejected("its proof is wrong (its token differs from this worker's)");
                        return;
                    }
                    expect(Stage.KEY, 4 + LaneOffer.KEY_BYTES);
                }
                case KEY -> {
                    if (in.getInt() != LaneOffer.KEY_BYTES) {
                        throw new IOException("a malformed lane key");
                    }
                    byte[] laneKey = new byte[LaneOffer.KEY_BYTES];
                    in.get(laneKey);
                    NettyConnection owner = connectionsByKey.get(HexFormat.of().formatHex(laneKey));
                    if (owner == null || !owner.isActive()) {
                        throw new IOException("a key of no open connection");
                    }
                    this.owner = owner;
                    out.clear().putInt(1).put(Lanes.WELCOME).flip();
                    stage = Stage.WELCOMED;
                    key.interestOps(SelectionKey.OP_WRITE);
                }
                default -> throw new IllegalStateException("handshake stage " + stage);
            }
            if (out.hasRemaining()) {
                key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            }
        }

        private void rejected(String reason) {
            onRejected.run();
            fail("failed authentication: " + reason, false);
        }

        void fail(String reason, boolean countAsRejected) {
            if (countAsRejected) {
                onRejected.run();
            }
            refused.increment();
            log.debug("lanes: dropping an accepted socket: {}", reason);
            closeQuietly(channel); // cancels its key
        }

        /** The welcome is written: the lane is the owner's, with a thread of its own. */
        private void welcomed(SelectionKey key) throws IOException {
            key.cancel();
            String peer = String.valueOf(channel.getRemoteAddress());
            SyncLane lane = new SyncLane(channel, channel.getLocalAddress() instanceof InetSocketAddress ? "tcp" : "uds",
                    peer.isEmpty() ? "a local process" : peer, Lanes.MAX_REQUEST_FRAME, spinNanos);
            lane.owner = owner;
            open.add(lane);
            if (closed || !owner.isActive()) {
                open.remove(lane);
                lane.close();
                return;
            }
            Thread thread = dedicated.newThread(() -> serve(lane));
            threads.add(thread);
            thread.start();
        }
    }

    private enum Stage { HELLO, PROOF, KEY, WELCOMED }

    /**
     * A lane's own thread: every request until the lane or its connection closes, each handed to
     * the listener as a call of the owner, answered through a {@link LaneResponder}.
     */
    private void serve(SyncLane lane) {
        NettyConnection owner = lane.owner;
        LaneResponder responder = new LaneResponder(lane, owner);
        try {
            while (!closed && owner.isActive()) {
                ByteBuf frame = lane.read(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
                if (frame == null) {
                    continue;
                }
                InboundMessage call = FrameCodec.decode(frame);
                if (call.kind() != MessageKind.CALL) {
                    throw new IOException("a " + call.kind() + " on a lane, where only calls come");
                }
                listener.onCall(owner, call, responder);
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
     * Closes the listening sockets, every handshake and lane, interrupts the lanes' threads (one
     * still in a handler, at a shutdown that does not wait for them, is interrupted as request
     * threads are) and waits, bounded, for them to end.
     */
    @Override
    public void close() {
        closed = true;
        selector.wakeup(); // the accepting thread ends, closing its sockets and the selector
        if (acceptor == null) {
            for (ServerSocketChannel server : servers) {
                closeQuietly(server);
            }
        }
        for (SyncLane lane : open) {
            lane.close();
        }
        List<Thread> all = new ArrayList<>(threads);
        if (acceptor != null) {
            all.add(acceptor);
        }
        for (Thread thread : all) {
            thread.interrupt();
        }
        for (Thread thread : all) {
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
}
