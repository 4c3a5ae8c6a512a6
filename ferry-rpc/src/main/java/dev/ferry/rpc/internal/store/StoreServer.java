package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP store server: a {@link KeyValueTable} served over a listening socket, one virtual thread
 * per connection plus one per parked wait. See {@link StoreProtocol} for the wire format.
 *
 * <p>Shutdown order matters: parked waits are answered with SHUTDOWN first, then sockets close,
 * so a client blocked in {@code get} learns why rather than seeing a bare disconnect.
 *
 * <p>This class is thread-safe.
 */
public final class StoreServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreServer.class);
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(5);

    private final ServerSocket listener;
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

    private StoreServer(ServerSocket listener, PeerAuthentication auth, SSLContext tls) {
        this.listener = listener;
        this.auth = auth;
        this.tls = tls;
        this.address = (InetSocketAddress) listener.getLocalSocketAddress();
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
        if (port < 0 || port > 65535) {
            throw new RpcException(Code.INVALID_ARGUMENT, "TcpStore port must be in 0..65535, got " + port);
        }
        InetSocketAddress bindAddress = new InetSocketAddress(host, port);
        if (bindAddress.isUnresolved()) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Cannot resolve TcpStore server host '" + host + "'");
        }
        ServerSocket listener = null;
        try {
            listener = new ServerSocket();
            // Lets a restarted job rebind a port still in TIME_WAIT; a live listener still blocks it.
            listener.setReuseAddress(true);
            listener.bind(bindAddress, 1024);
        } catch (BindException e) {
            closeQuietly(listener);
            throw new RpcException(Code.RENDEZVOUS_FAILED,
                    "Cannot start TcpStore server on " + host + ":" + port + ": " + e.getMessage(), e);
        } catch (IOException e) {
            closeQuietly(listener);
            throw new RpcException(Code.RENDEZVOUS_FAILED,
                    "Cannot start TcpStore server on " + host + ":" + port + ": " + e, e);
        }
        StoreServer server = new StoreServer(listener, auth, tls);
        server.ioThreads.start("ferry-store-accept-" + server.address.getPort(), server::acceptLoop);
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
        return ioThreads.liveCount() + waiterThreads.liveCount();
    }

    /** GET and WAIT requests currently parked waiting for keys. */
    public int parkedRequests() {
        return table.parkedWaiters();
    }

    public boolean isClosed() {
        return closed.get();
    }

    private void acceptLoop() {
        while (!closed.get()) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (!closed.get()) {
                    log.error("TcpStore server on {} stopped accepting connections", address, e);
                }
                return;
            }
            register(socket);
        }
    }

    private void register(Socket socket) {
        try {
            socket.setTcpNoDelay(true);
            ServerConnection connection = new ServerConnection(socket, table, waiterThreads, connections::remove, auth, tls);
            connections.add(connection);
            // close() may have swept the set before we added to it; don't leave this one behind.
            if (closed.get()) {
                connection.close();
                return;
            }
            ioThreads.start("ferry-store-conn-" + connection.peer(), connection::serve);
        } catch (IOException e) {
            log.debug("Rejected store client {}: {}", socket.getRemoteSocketAddress(), e.toString());
            closeQuietly(socket);
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
        closeQuietly(listener);
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
