package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.TransportTuning;
import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import dev.ferry.rpc.internal.observe.RateLimitedLog;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.wire.Chunks;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ChannelOutputShutdownException;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ImmediateEventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * Netty transport: native epoll where available (NIO otherwise), {@code TCP_NODELAY}, and between
 * workers on the same host a Unix domain socket instead of TCP when epoll is there (TensorPipe's
 * transport negotiation, simplified). One event-loop group serves accepted and opened connections.
 *
 * <h2>Addresses</h2>
 * {@link #start} returns {@code host:port}, followed, when a Unix socket is open, by
 * {@code ;uds=<socket path>;hostid=<host id>}. {@link #connect} uses the socket when the peer's host
 * id is this transport's (same hostname, boot id and network namespace, {@link HostIdentity}) and falls back to TCP
 * when that fails. The socket file lives in a fresh temporary directory deleted at {@link #close}.
 *
 * <h2>Writing and reading</h2>
 * Each connection writes through an {@link OutboundQueue}: large frames in chunks, interleaved
 * with other messages, never more than the write-buffer water marks in the channel, and senders
 * on ordinary threads wait (bounded) while too much is queued. A small message alone in its
 * exchange ({@link CallBalance}: a call with none other in flight, the answer to the peer's only
 * call) is written by its sender's thread itself when nothing is queued ahead ({@link DirectWriter};
 * plain native sockets only), which saves a hand-off to the event loop each way. Reading goes through a
 * {@link UnitReader} and a {@link FrameAssembler}: large frames are assembled in memory from a
 * {@link LargeBufferPool} shared by the transport's connections (reused, so the kernel does not
 * fault in fresh pages for every message), and their chunk data is read by the socket straight into
 * it ({@link DirectReadAllocator}). Unix sockets get 4 MiB socket buffers. {@link PeerChannel#pauseReading}
 * turns Netty's auto-read off, so a busy receiver stops taking bytes and TCP's flow control pushes
 * back to the sender.
 *
 * <h2>Shared memory</h2>
 * With a Unix socket, a transport also creates a {@link SharedMemory} segment (unless its settings
 * turn it off or the host cannot: then everything stays on the socket). Each Unix-socket connection
 * negotiates it ({@link SharedMemoryLink}); from then on an out-of-band buffer of 256 KiB or more is
 * copied once into the sender's segment and only a descriptor travels in the frame
 * ({@link dev.ferry.rpc.internal.wire.SharedBuffers}); the receiver hands the application a view of
 * the sender's memory. Such a connection's {@link PeerChannel#kind()} is {@code uds+shm}.
 *
 * <pre>
 *   pipeline:  [direct: guard] ─▶ [shm: announce/close] ─▶ [units: UnitReader ─▶ FrameAssembler ─▶ listener] ─▶ [messages: writability, errors]
 *   reads:     ordinary buffers, or (DirectReadAllocator) straight into a large frame's own buffer
 *   writes:    PeerChannel.send ─▶ OutboundQueue ─(while writable)─▶ channel
 *                                    └─ alone, nothing queued ─▶ DirectWriter: the sender's write(2)
 * </pre>
 */
public final class NettyTransport implements Transport {
    private static final Logger log = LoggerFactory.getLogger(NettyTransport.class);
    private static final AttributeKey<NettyConnection> CONNECTION = AttributeKey.valueOf("ferry.connection");
    /** Connections dropped before their handshake ended are logged at most this often a minute; the rest counted. */
    private static final int DROPS_LOGGED_PER_MINUTE = 20;
    /** Channel write buffer: writes stop above the high mark and resume below the low one. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(2 << 20, 4 << 20);
    /**
     * Socket buffers of a Unix socket (the kernel caps them at net.core.wmem_max/rmem_max, 4 MiB on the
     * benchmark VM). The default (~208 KiB) limits how much one write moves: a C sender with 1 MiB
     * writes made 4.9 GB/s with it and 6.5 GB/s with 4 MiB.
     */
    static final int UDS_SOCKET_BUFFER_BYTES = 4 << 20;

    /**
     * What a Netty transport is made of: the options it was given, resolved once.
     *
     * @param bindHost       the host it listens on and advertises
     * @param maxFrameBytes  the largest message sent or accepted
     * @param tuning         how it moves bytes ({@link TransportTuning})
     * @param hostId         this host's identity; peers with the same one use the same-host channels
     * @param authentication the token every connection must prove before it carries anything
     *                       ({@link PeerAuthentication}); null: connections are not authenticated
     * @param tls            TLS for TCP connections ({@link TlsChannels}); null: none
     */
    record Settings(String bindHost, long maxFrameBytes, TransportTuning tuning, String hostId,
                    PeerAuthentication authentication, TlsChannels tls, ConnectionLimits limits) {
        static Settings of(RpcBackendOptions options) {
            TransportTuning tuning = options.transport();
            return new Settings(options.listenHost(), options.maxMessageBytes(), tuning,
                    tuning.hostId() != null ? tuning.hostId() : HostIdentity.local(),
                    options.authToken() == null ? null : PeerAuthentication.of(options.authToken(), options.authTimeout()),
                    options.tls() == null ? null : TlsChannels.of(options.tls(), options.tlsVerifyHostnames()),
                    new ConnectionLimits(options.authTimeout(), options.stallTimeout(),
                            ConnectionLimits.DEFAULT_MAX_PENDING_HANDSHAKES));
        }

        int ioThreads() {
            return tuning.ioThreads();
        }

        long sendQueueBytes() {
            return tuning.sendQueueBytes();
        }

        Duration sendQueueTimeout() {
            return tuning.sendQueueTimeout();
        }

        Duration closeTimeout() {
            return tuning.closeTimeout();
        }

        boolean unixSockets() {
            return tuning.unixSockets();
        }

        long spinNanos() {
            return tuning.spinTime().toNanos();
        }

        int syncLanes() {
            return tuning.syncLanes();
        }
    }

    private final Settings settings;
    private final boolean epoll;
    private final EventLoopGroup group;
    private final ChannelGroup channels;
    private final Set<NettyConnection> connections = ConcurrentHashMap.newKeySet();
    private final Class<? extends ServerChannel> serverChannelType;
    private final Class<? extends Channel> channelType;
    private final LargeBufferPool receivePool;
    /** When received memory runs short: the collections the pool and shared memory ask for. */
    private final MemoryPressure memoryPressure;
    private final java.util.concurrent.atomic.LongAdder authRejections = new java.util.concurrent.atomic.LongAdder();
    /** Connections closed as they were accepted: too many others were in their handshake. */
    private final java.util.concurrent.atomic.LongAdder handshakesRefused = new java.util.concurrent.atomic.LongAdder();
    /** Frames senders wrote to their sockets themselves ({@link DirectWriter}), all connections. */
    private final java.util.concurrent.atomic.LongAdder directWrites = new java.util.concurrent.atomic.LongAdder();
    private final java.util.Queue<Thread> ioThreadsStarted = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile TransportListener listener;
    private volatile Channel serverChannel;
    /** The channels that accept connections (TCP, Unix socket), which the handshake gate pauses. */
    private final List<Channel> listeners = new CopyOnWriteArrayList<>();
    private final HandshakeGate handshakes;
    /** Connections dropped before their handshake ended: logged within bounds, strangers being many. */
    private final RateLimitedLog drops = RateLimitedLog.perMinute(log, DROPS_LOGGED_PER_MINUTE);
    private volatile Path socketDir;
    private final SharedMemory.Settings sharedMemorySettings;
    /** Same-host large buffers (null: off, or not possible here); made with the Unix socket. */
    private volatile SharedMemory sharedMemory;
    /** Accepts lanes ({@link Lanes}), or null (off, or TLS). */
    private volatile LaneServer laneServer;
    /** Exchanges this side's lanes carried, all connections. */
    private final java.util.concurrent.atomic.LongAdder laneExchanges = new java.util.concurrent.atomic.LongAdder();
    /** Makes each accepted lane's thread. */
    private final ThreadFactory dedicatedThreads;

    /**
     * Initializes the classes of Netty's native write path that only large transfers reach: the
     * gathering write's {@code IovArray} (the first message in chunks) and {@code Errors} (the first
     * write the socket cannot take whole, at the first tensor of several MiB). Met once the JIT has
     * compiled the write path, an unloaded class deoptimizes it, and its recompilation, with the
     * pipeline inlined (tens of ms of a compiler thread), lands in the middle of that transfer.
     */
    private static void initializeWritePathClasses() {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        for (Class<?> type : new Class<?>[] {io.netty.channel.unix.Errors.class, io.netty.channel.unix.IovArray.class}) {
            try {
                lookup.ensureInitialized(type);
            } catch (IllegalAccessException | RuntimeException | LinkageError e) {
                log.debug("cannot initialize {}: {}", type.getName(), e.toString());
            }
        }
    }

    /**
     * A transport as {@code options} say; {@code threads} makes its event-loop threads, which must
     * never block.
     */
    public NettyTransport(RpcBackendOptions options, TransportThreads transportThreads) {
        ThreadFactory threads = transportThreads.eventLoops();
        this.dedicatedThreads = transportThreads.dedicated();
        this.settings = Settings.of(options);
        this.handshakes = new HandshakeGate(settings.limits(), listeners);
        this.sharedMemorySettings = SharedMemory.Settings.of(settings.tuning());
        this.epoll = Epoll.isAvailable();
        if (epoll) {
            initializeWritePathClasses();
            // Links the duplicate-descriptor call now: its first use, at the first connection,
            // would otherwise spend a few ms of a CPU at the end of init (seen in W1's idle probe).
            DirectWriter.warmUp();
        }
        IoHandlerFactory ioHandler = !epoll ? NioIoHandler.newFactory()
                : settings.spinNanos() > 0 && AdaptiveSpin.MULTI_CPU
                ? EpollIoHandler.newFactory(0, SpinThenParkStrategy.factory(settings.spinNanos()))
                : EpollIoHandler.newFactory();
        ThreadFactory ioThreads = runnable -> {
            Thread thread = threads.newThread(runnable);
            ioThreadsStarted.add(thread);
            return thread;
        };
        this.group = new IdleEventLoopGroup(settings.ioThreads(), ioThreads, ioHandler);
        this.serverChannelType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        this.channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.channels = new DefaultChannelGroup("ferry", ImmediateEventExecutor.INSTANCE);
        this.memoryPressure = new MemoryPressure(settings.tuning().memoryCollections());
        this.receivePool = new LargeBufferPool(settings.tuning().receiveBufferPoolBytes(), memoryPressure);
    }

    @Override
    public String start(TransportListener listener) {
        this.listener = listener;
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(serverChannelType)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .childHandler(new Initializer(true, "tcp"));
        try {
            serverChannel = bootstrap.bind(settings.bindHost(), 0).sync().channel();
            listeners.add(serverChannel);
        } catch (Exception e) {
            close();
            throw new RpcException(RpcException.Code.UNAVAILABLE,
                    "cannot listen on " + settings.bindHost() + ": " + e.getMessage(), e);
        }
        channels.add(serverChannel);
        InetSocketAddress bound = (InetSocketAddress) serverChannel.localAddress();
        String address = settings.bindHost() + ":" + bound.getPort();
        String socket = settings.unixSockets() && epoll ? listenOnUnixSocket() : null;
        startLanes(socket != null);
        return socket == null ? address : address + ";uds=" + socket + ";hostid=" + settings.hostId();
    }

    /**
     * Starts accepting lanes ({@link LaneServer}; not with TLS: lanes are plain sockets; with
     * authentication each lane runs the connections' exchange first). Without lanes (off, or the
     * sockets cannot be opened) calls use their connections.
     */
    private void startLanes(boolean unixSocket) {
        if (settings.syncLanes() <= 0 || settings.tls() != null) {
            return;
        }
        LaneServer server = null;
        try {
            server = new LaneServer(settings.bindHost(), unixSocket ? socketDir : null, settings.authentication(),
                    settings.authentication() != null ? settings.authentication().timeout()
                            : PeerAuthentication.DEFAULT_TIMEOUT,
                    settings.spinNanos(), dedicatedThreads, listener, authRejections::increment);
            server.listen();
            laneServer = server;
        } catch (IOException | RuntimeException e) {
            log.warn("cannot listen for synchronous-exchange lanes, calls will use connections only: {}", e.toString());
            if (server != null) {
                server.close();
            }
        }
    }

    /** Listens on a Unix socket in a fresh temporary directory; null (TCP only) if that fails. */
    private String listenOnUnixSocket() {
        try {
            socketDir = Files.createTempDirectory("ferry-");
            Path socket = socketDir.resolve("rpc.sock");
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(EpollServerDomainSocketChannel.class)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                    .childOption(ChannelOption.SO_SNDBUF, UDS_SOCKET_BUFFER_BYTES)
                    .childOption(ChannelOption.SO_RCVBUF, UDS_SOCKET_BUFFER_BYTES)
                    .childHandler(new Initializer(true, "uds"))
                    .bind(new DomainSocketAddress(socket.toFile())).sync().channel();
            channels.add(server);
            listeners.add(server);
            sharedMemory = SharedMemory.create(sharedMemorySettings, memoryPressure);
            return socket.toString();
        } catch (Exception e) {
            log.warn("cannot listen on a Unix domain socket, peers on this host will use TCP: {}", e.toString());
            deleteSocketDir();
            return null;
        }
    }

    @Override
    public CompletableFuture<PeerChannel> connect(String address) {
        CompletableFuture<PeerChannel> result = new CompletableFuture<>();
        PeerAddress peer;
        try {
            peer = PeerAddress.parse(address);
        } catch (RpcException e) {
            result.completeExceptionally(e);
            return result;
        }
        if (peer.socket() != null && settings.unixSockets() && epoll && settings.hostId().equals(peer.hostId())) {
            open(new Bootstrap().channel(EpollDomainSocketChannel.class)
                            .option(ChannelOption.SO_SNDBUF, UDS_SOCKET_BUFFER_BYTES)
                            .option(ChannelOption.SO_RCVBUF, UDS_SOCKET_BUFFER_BYTES)
                            .handler(new Initializer(false, "uds")),
                    new DomainSocketAddress(peer.socket()), address).whenComplete((connection, error) -> {
                        if (error == null) {
                            result.complete(connection);
                        } else {
                            log.debug("Unix socket {} failed, using TCP: {}", peer.socket(), error.toString());
                            connectTcp(peer, address, result);
                        }
                    });
        } else {
            connectTcp(peer, address, result);
        }
        return result;
    }

    private void connectTcp(PeerAddress peer, String address, CompletableFuture<PeerChannel> result) {
        Bootstrap bootstrap = new Bootstrap()
                .channel(channelType)
                .option(ChannelOption.TCP_NODELAY, true)
                .attr(TlsChannels.PEER_HOST, peer.host())
                .handler(new Initializer(false, "tcp"));
        open(bootstrap, InetSocketAddress.createUnresolved(peer.host(), peer.port()), address).whenComplete(
                (connection, error) -> {
                    if (error == null) {
                        result.complete(connection);
                    } else {
                        result.completeExceptionally(error);
                    }
                });
    }

    private CompletableFuture<PeerChannel> open(Bootstrap bootstrap, SocketAddress remote, String address) {
        CompletableFuture<PeerChannel> result = new CompletableFuture<>();
        bootstrap.group(group)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK);
        ChannelFuture connecting = remote instanceof InetSocketAddress inet
                ? bootstrap.connect(inet.getHostString(), inet.getPort()) : bootstrap.connect(remote);
        connecting.addListener((ChannelFutureListener) f -> {
            if (f.isSuccess()) {
                result.complete(f.channel().attr(CONNECTION).get());
            } else {
                result.completeExceptionally(new RpcException(RpcException.Code.UNAVAILABLE,
                        "cannot connect to " + address + ": " + f.cause().getMessage(), f.cause()));
            }
        });
        return result;
    }

    @Override
    public String describe() {
        return epoll ? "netty-epoll" : "netty-nio";
    }

    @Override
    public void close() {
        close(null);
    }

    @Override
    public void closeNow(Throwable cause) {
        close(cause);
    }

    /** Graceful with no cause, else abortive with {@code cause}. */
    private void close(Throwable cause) {
        LaneServer lanes = laneServer;
        if (lanes != null) {
            lanes.close();
        }
        try {
            // Gracefully: write what is queued (replies sent just before shutdown) before closing.
            List<ChannelFuture> closing = new ArrayList<>();
            for (NettyConnection connection : connections) {
                if (cause == null) {
                    connection.close();
                } else {
                    connection.abort(cause);
                }
                closing.add(connection.channel().closeFuture());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            for (ChannelFuture future : closing) {
                future.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            channels.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
        } finally {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(15, TimeUnit.SECONDS);
            // The group reports termination just before its threads return: wait for them, so a
            // closed transport has no thread left (leak checks count them).
            for (Thread thread : ioThreadsStarted) {
                try {
                    thread.join(5_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            deleteSocketDir();
            receivePool.clear();
            SharedMemory shm = sharedMemory;
            if (shm != null) {
                shm.close();
            }
        }
    }

    /**
     * Counters of the shared-memory channel, when there is one, and of authentication, when it is on
     * ({@code transport.auth.rejected}: connections dropped because they did not authenticate);
     * {@code transport.tls} when TCP connections use TLS; {@code transport.handshakes.pending}, the
     * accepted connections still in their handshake, and {@code transport.handshakes.refused}, those
     * closed at once because too many were.
     */
    @Override
    public java.util.Map<String, String> debugInfo() {
        SharedMemory shm = sharedMemory;
        java.util.Map<String, String> info = new java.util.TreeMap<>(shm == null ? java.util.Map.of() : shm.debugInfo());
        LaneServer lanes = laneServer;
        if (lanes != null) {
            info.putAll(lanes.debugInfo());
            int opened = 0;
            for (NettyConnection connection : connections) {
                opened += connection.openLanes();
            }
            info.put("transport.lanes.exchanges", Long.toString(laneExchanges.sum()));
            info.put("transport.lanes.open", Integer.toString(opened));
        } else {
            info.put("transport.lanes", settings.syncLanes() <= 0 ? "off (syncLanes 0)" : "off (TLS)");
        }
        info.put("transport.direct_writes", !settings.tuning().directWrites() ? "off (directWrites false)"
                : DirectWriter.AVAILABLE ? Long.toString(directWrites.sum()) : "off (no native access)");
        info.put("transport.handshakes.pending", Integer.toString(handshakes.pending()));
        info.put("transport.handshakes.refused", Long.toString(handshakesRefused.sum()));
        if (settings.authentication() != null) {
            info.put("transport.auth", "hmac-sha256");
            info.put("transport.auth.rejected", Long.toString(authRejections.sum()));
        }
        if (settings.tls() != null) {
            info.put("transport.tls", settings.tls().verifiesHostnames()
                    ? "mutual, host names verified (TCP connections)" : "mutual (TCP connections)");
        }
        return info;
    }

    /** Connections dropped because they failed authentication, by either end. */
    long authRejections() {
        return authRejections.sum();
    }

    /** The shared-memory channel, or null: for tests. */
    SharedMemory sharedMemory() {
        return sharedMemory;
    }

    private void deleteSocketDir() {
        Path dir = socketDir;
        if (dir == null) {
            return;
        }
        try {
            Files.deleteIfExists(dir.resolve("rpc.sock"));
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            log.warn("cannot delete {}: {}", dir, e.toString());
        }
    }

    /** Where a peer listens, as {@link #start} wrote it. */
    record PeerAddress(String host, int port, String socket, String hostId) {
        static PeerAddress parse(String address) {
            String[] parts = address.split(";");
            String tcp = parts[0];
            int colon = tcp.lastIndexOf(':');
            int port;
            try {
                port = colon <= 0 ? -1 : Integer.parseInt(tcp.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
            if (port < 0 || port > 65535) {
                throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "bad worker address '" + address + "'");
            }
            String socket = null;
            String hostId = null;
            for (int i = 1; i < parts.length; i++) {
                if (parts[i].startsWith("uds=")) {
                    socket = parts[i].substring(4);
                } else if (parts[i].startsWith("hostid=")) {
                    hostId = parts[i].substring(7);
                }
            }
            return new PeerAddress(tcp.substring(0, colon), port, socket, hostId);
        }
    }

    private final class Initializer extends ChannelInitializer<Channel> {
        private final boolean accepted;
        private final String kind;

        Initializer(boolean accepted, String kind) {
            this.accepted = accepted;
            this.kind = kind;
        }

        @Override
        protected void initChannel(Channel channel) {
            // An accepted connection is a stranger's until its HELLO: a bounded number at once, each
            // with a deadline, small frames only.
            Runnable handshakeOver = accepted ? handshakes.begin(channel) : null;
            if (accepted && handshakeOver == null) {
                handshakesRefused.increment();
                drops.warn("refusing connection from {}: {} connections are in their handshake already",
                        channel.remoteAddress(), settings.limits().maxPendingHandshakes());
                channel.close();
                return;
            }
            SharedMemory shm = sharedMemory;
            SharedMemoryLink link = shm != null && "uds".equals(kind) ? shm.link(channel) : null;
            // A write that fails (the peer reset the connection: killed, or closed with our data
            // unread) must not close the channel before it read what the peer sent first: with
            // auto-close off Netty shuts the output down, and the channel closes at the end of input.
            channel.config().setAutoClose(false);
            // Senders write their own small frames on plain native sockets (not under TLS), once the
            // channel is active (and authenticated, with authentication).
            boolean tls = settings.tls() != null && "tcp".equals(kind);
            DirectWriter direct = !tls && settings.tuning().directWrites()
                    ? DirectWriter.open(channel, directWrites, settings.authentication() != null) : null;
            NettyConnection connection = new NettyConnection(channel, kind, accepted, link, direct, settings, receivePool,
                    laneServer, laneExchanges,
                    listener);
            channel.attr(CONNECTION).set(connection);
            channels.add(channel);
            connections.add(connection);
            channel.closeFuture().addListener(f -> connections.remove(connection));
            FrameAssembler assembler = new FrameAssembler(settings.maxFrameBytes(), receivePool, link);
            // First TLS, then the token's handshake behind it (encrypted), then the rest. An accepted
            // channel is active already: each handler must be in place before the next starts writing.
            if (tls) {
                settings.tls().install(channel, accepted);
            }
            if (direct != null) {
                channel.pipeline().addFirst("direct", direct.guard());
            }
            if (settings.authentication() != null) {
                channel.pipeline().addBefore(channel.pipeline().context(this).name(), "auth",
                        new AuthHandshake(settings.authentication(), accepted, authRejections::increment,
                                direct != null ? direct::authenticated : () -> { }));
            }
            if (link != null) {
                channel.pipeline().addLast("shm", link.handshake());
            }
            UnitReader units = new UnitReader(assembler, unitLimit(settings.maxFrameBytes()), connection::deliver,
                    connection::laneOffered, handshakeOver);
            StallWatch.start(channel, units, settings.limits().stallTimeout());
            if (!tls) {
                // With TLS the socket carries ciphertext: reads go through TLS's buffers, not into messages.
                channel.config().setRecvByteBufAllocator(new DirectReadAllocator(units));
            }
            channel.pipeline()
                    .addLast("units", units)
                    .addLast("messages", new MessageHandler(connection, assembler, units));
            if (accepted) {
                listener.onAccepted(connection);
            }
        }
    }

    /** Largest unit a reader accepts: one chunk's data (at most a whole frame) and its header. */
    static long unitLimit(long maxFrameBytes) {
        return Math.min(maxFrameBytes, Chunks.CHUNK_BYTES) + Chunks.OVERHEAD;
    }

    /** Writes when the channel becomes writable; closes the connection on bad input. */
    private final class MessageHandler extends ChannelInboundHandlerAdapter {
        private final NettyConnection connection;
        private final FrameAssembler assembler;
        private final UnitReader units;
        private Throwable failure;

        MessageHandler(NettyConnection connection, FrameAssembler assembler, UnitReader units) {
            this.connection = connection;
            this.assembler = assembler;
            this.units = units;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            connection.activated(); // what it writes is held by the authentication handshake until the peer proved itself
            ctx.fireChannelActive();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                connection.outbound().drain();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (failure == null) {
                failure = connection.abortCause(); // aborted: the writes it cut off fail here
            }
            // A write failed (auto-close is off): the output is shut, but what the peer sent before
            // it went is still to be read; the channel closes at the end of input.
            boolean outputOnly = cause instanceof ChannelOutputShutdownException && ctx.channel().isOpen();
            if (failure == null) {
                failure = cause;
                String what = outputOnly ? "cannot write on" : "closing";
                String why = cause.getCause() != null ? cause.getCause().toString() : cause.toString();
                if (units.handshaking()) {
                    drops.warn("{} connection from {} before its handshake ended: {}", what, connection.remoteAddress(), why);
                } else {
                    log.warn("{} connection to {}: {}", what, connection.remoteAddress(), why);
                }
                // Before the close: messages whose writes the close fails report this cause, not just "closed".
                connection.outbound().failAll(cause);
            } else {
                // What follows the first failure (writes failing as the channel closes) says nothing new.
                log.debug("connection to {} after its failure: {}", connection.remoteAddress(), cause.toString());
            }
            if (!outputOnly) {
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (failure == null) {
                failure = connection.abortCause();
            }
            assembler.clear();
            connection.outbound().failAll(failure != null ? failure : new ClosedChannelException());
            connection.closed();
            listener.onClosed(connection, failure);
        }
    }
}
