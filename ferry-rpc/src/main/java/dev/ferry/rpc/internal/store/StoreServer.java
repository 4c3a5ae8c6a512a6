package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.observe.RateLimitedLog;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP store server: a {@link KeyValueTable} served over a listening socket, one virtual thread
 * per connection through its handshake plus one per parked wait. See {@link StoreProtocol} for the wire format.
 *
 * <p>Strangers cost little ({@link ConnectionLimits}): one thread accepts every client and drives
 * every handshake without blocking ({@link StoreAcceptor}), so a connection that has not proved
 * itself holds no thread; at most {@code maxPendingHandshakes} are in their handshake at once
 * (further clients wait in the kernel's backlog, costing this process nothing); each reads only
 * its HELLO's and the token exchange's few bytes, and is closed if its handshake is not through
 * within the handshake timeout. One scheduler thread runs every connection's stall watch.
 *
 * <p>Shutdown order matters: parked waits are answered with SHUTDOWN first, then sockets close,
 * so a client blocked in {@code get} learns why rather than seeing a bare disconnect.
 *
 * <p>This class is thread-safe.
 */
public final class StoreServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreServer.class);
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(5);
    /** Strangers dropped are logged at most this often a minute; the rest counted. */
    private static final int DROPS_LOGGED_PER_MINUTE = 20;

    private final InetSocketAddress address;
    private final KeyValueTable table = new KeyValueTable();
    private final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
    private final ThreadTracker ioThreads = new ThreadTracker();
    private final ThreadTracker waiterThreads = new ThreadTracker();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** What clients must prove before anything else; null: nothing. */
    private final PeerAuthentication auth;
    /** The TLS every connection is wrapped in, client certificate required; null: plain TCP. */
    private final SSLContext tls;
    private final ConnectionLimits limits;
    private final StoreAcceptor acceptor;
    private final ScheduledThreadPoolExecutor scheduler;
    private final List<Thread> schedulerThreads = new CopyOnWriteArrayList<>();
    private final RateLimitedLog drops = RateLimitedLog.perMinute(log, DROPS_LOGGED_PER_MINUTE);

    private StoreServer(ServerSocketChannel listener, PeerAuthentication auth, SSLContext tls, ConnectionLimits limits)
            throws IOException {
        this.auth = auth;
        this.tls = tls;
        this.limits = limits;
        this.address = (InetSocketAddress) listener.getLocalAddress();
        this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "ferry-store-deadlines-" + address.getPort());
            thread.setDaemon(true);
            schedulerThreads.add(thread); // joined by close(), so that no thread outlives the server
            return thread;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        this.acceptor = new StoreAcceptor(listener, auth, tls != null, limits, new Handover(), drops,
                "ferry-store-accept-" + address.getPort());
    }

    /**
     * Binds {@code host:port} (port 0: an ephemeral port) and starts accepting clients.
     *
     * @throws RpcException RENDEZVOUS_FAILED if the address cannot be bound (e.g. already in use),
     *     INVALID_ARGUMENT if the host cannot be resolved or the port is out of range
     */
    public static StoreServer start(String host, int port) {
        return start(host, port, null);
    }

    /** As {@link #start(String, int)}, accepting only clients that prove {@code auth}'s token (null: any). */
    public static StoreServer start(String host, int port, PeerAuthentication auth) {
        return start(host, port, auth, null);
    }

    /**
     * As {@link #start(String, int, PeerAuthentication)}, over TLS with {@code tls} (null: plain
     * TCP): the server presents the context's certificate and requires a trusted one from each client.
     */
    public static StoreServer start(String host, int port, PeerAuthentication auth, SSLContext tls) {
        return start(host, port, auth, tls, auth == null ? ConnectionLimits.DEFAULTS
                : new ConnectionLimits(auth.timeout(), ConnectionLimits.DEFAULT_STALL_TIMEOUT,
                        ConnectionLimits.DEFAULT_MAX_PENDING_HANDSHAKES));
    }

    /** As {@link #start(String, int, PeerAuthentication, SSLContext)}, within {@code limits}. */
    public static StoreServer start(String host, int port, PeerAuthentication auth, SSLContext tls,
                                    ConnectionLimits limits) {
        if (port < 0 || port > 65535) {
            throw new RpcException(Code.INVALID_ARGUMENT, "TcpStore port must be in 0..65535, got " + port);
        }
        InetSocketAddress bindAddress = new InetSocketAddress(host, port);
        if (bindAddress.isUnresolved()) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Cannot resolve TcpStore server host '" + host + "'");
        }
        ServerSocketChannel listener = null;
        StoreServer server;
        try {
            listener = ServerSocketChannel.open();
            // Lets a restarted job rebind a port still in TIME_WAIT; a live listener still blocks it.
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(bindAddress, 1024);
            server = new StoreServer(listener, auth, tls, limits);
        } catch (BindException e) {
            closeQuietly(listener);
            throw new RpcException(Code.RENDEZVOUS_FAILED,
                    "Cannot start TcpStore server on " + host + ":" + port + ": " + e.getMessage(), e);
        } catch (IOException e) {
            closeQuietly(listener);
            throw new RpcException(Code.RENDEZVOUS_FAILED,
                    "Cannot start TcpStore server on " + host + ":" + port + ": " + e, e);
        }
        server.acceptor.start();
        log.debug("TcpStore server listening on {}", server.address);
        return server;
    }

    public InetSocketAddress address() {
        return address;
    }

    /** Clients currently connected. */
    public int activeConnections() {
        return connections.size();
    }

    /** Threads of this server still running: acceptor, connection readers and parked waits. */
    public int liveThreads() {
        return (acceptor.isAlive() ? 1 : 0) + ioThreads.liveCount() + waiterThreads.liveCount();
    }

    /** Accepted connections still in their handshake. */
    public int pendingHandshakes() {
        return acceptor.pendingHandshakes();
    }

    /** GET and WAIT requests currently parked waiting for keys. */
    public int parkedRequests() {
        return table.parkedWaiters();
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** Where the acceptor's connections go: a reader thread each, once through their handshake or into TLS. */
    private final class Handover implements StoreAcceptor.Handover {
        @Override
        public void handshaken(SocketChannel channel) {
            register(channel, connection -> connection::serve, () -> { });
        }

        @Override
        public void startsTls(SocketChannel channel, long deadlineNanos, Runnable handshakeEnded) {
            // A TLS handshake's slot is freed with its thread, so strangers never hold more threads than slots.
            register(channel, connection -> () -> connection.serveTls(deadlineNanos), handshakeEnded);
        }

        private void register(SocketChannel channel, Function<ServerConnection, Runnable> reader, Runnable slot) {
            Socket socket = channel.socket();
            try {
                ServerConnection connection = new ServerConnection(socket, table, waiterThreads, connections::remove,
                        auth, tls, limits, scheduler, slot, drops);
                connections.add(connection);
                // close() may have swept the set before we added to it; don't leave this one behind.
                if (closed.get()) {
                    connection.close();
                    slot.run();
                    return;
                }
                ioThreads.start("ferry-store-conn-" + connection.peer(), reader.apply(connection), slot);
            } catch (RuntimeException e) {
                log.debug("Rejected store client {}: {}", socket.getRemoteSocketAddress(), e.toString());
                slot.run();
                closeQuietly(socket);
            }
        }
    }

    /**
     * Stops the server: parked waits are answered with SHUTDOWN, every connection is closed and all
     * threads are joined before this returns. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        acceptor.close(); // with the listener and every connection still in its handshake
        table.close();
        boolean interrupted = false;
        try {
            if (!waiterThreads.joinAll(JOIN_TIMEOUT)) {
                log.warn("TcpStore server {}: parked waits did not finish within {}", address, JOIN_TIMEOUT);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        for (ServerConnection connection : Set.copyOf(connections)) {
            connection.close();
        }
        try {
            // Waiters again: a reader may have started one for a request that raced with close().
            if (!interrupted && !(ioThreads.joinAll(JOIN_TIMEOUT) && waiterThreads.joinAll(JOIN_TIMEOUT))) {
                log.warn("TcpStore server {}: threads did not finish within {}", address, JOIN_TIMEOUT);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        scheduler.shutdownNow();
        for (Thread thread : schedulerThreads) {
            try {
                if (!interrupted && !thread.join(JOIN_TIMEOUT)) {
                    log.warn("TcpStore server {}: its scheduler did not stop within {}", address, JOIN_TIMEOUT);
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        log.debug("TcpStore server on {} closed", address);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            log.debug("Ignoring failure to close {}: {}", closeable, e.toString());
        }
    }
}
