package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.store.StoreServer;
import java.net.InetSocketAddress;

/**
 * The server half of a {@link TcpStore}: holds the keys in memory and parks blocking {@code get}s
 * until their keys are set. In a job exactly one process (PyTorch: rank 0) runs it; that process
 * also talks to it through an ordinary {@link TcpStore} client.
 *
 * <p>Usually started for you by {@link TcpStore#create(TcpStoreOptions)} with {@code server(true)};
 * start one directly when the server should outlive (or not be tied to) a client:
 * <pre>{@code
 * try (TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0);
 *      TcpStore store = TcpStore.connect("127.0.0.1", server.port(), Duration.ofSeconds(30))) {
 *     ...
 * }
 * }</pre>
 *
 * <p>Each connection is served by its own virtual thread, and each parked wait by another, so a
 * slow or misbehaving client cannot stall the others; a client sending a malformed or oversized
 * frame (over 64 MiB) is disconnected and logged. The accessors {@link #activeConnections()},
 * {@link #liveThreads()} and {@link #parkedRequests()} exist for tests and diagnostics.
 *
 * <p>This class is thread-safe.
 */
public final class TcpStoreServer implements AutoCloseable {
    private final StoreServer server;

    TcpStoreServer(StoreServer server) {
        this.server = server;
    }

    /**
     * Binds {@code host:port} (port 0: an ephemeral port, see {@link #port()}) and starts serving.
     *
     * @throws RpcException RENDEZVOUS_FAILED naming {@code host:port} if it cannot be bound, e.g.
     *     "Address already in use"; INVALID_ARGUMENT for an unresolvable host or bad port
     */
    public static TcpStoreServer start(String host, int port) {
        return new TcpStoreServer(StoreServer.start(host, port));
    }

    /** The address actually bound. */
    public InetSocketAddress address() {
        return server.address();
    }

    /** The port actually bound (the ephemeral one when started with port 0). */
    public int port() {
        return server.address().getPort();
    }

    /** Number of clients currently connected. */
    public int activeConnections() {
        return server.activeConnections();
    }

    /**
     * Number of accepted connections still in their handshake (HELLO, and with a token its exchange):
     * at most 64, each holding no thread, each closed unless done within the authentication timeout.
     */
    public int pendingHandshakes() {
        return server.pendingHandshakes();
    }

    /** Number of threads of this server still alive; 0 once {@link #close()} has returned. */
    public int liveThreads() {
        return server.liveThreads();
    }

    /** Number of {@code get}/{@code waitFor} requests currently parked waiting for keys. */
    public int parkedRequests() {
        return server.parkedRequests();
    }

    /** Whether {@link #close()} has been called. */
    public boolean isClosed() {
        return server.isClosed();
    }

    /**
     * Stops the server. Clients blocked in {@code get}/{@code waitFor} are woken with a SHUTDOWN
     * error, every connection is closed and every server thread has ended when this returns.
     * Idempotent.
     */
    @Override
    public void close() {
        server.close();
    }

    @Override
    public String toString() {
        return "TcpStoreServer[" + address() + (isClosed() ? ", closed" : "") + "]";
    }
}
