package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.store.StoreArguments;
import dev.ferry.rpc.internal.store.StoreClient;
import dev.ferry.rpc.internal.store.StoreServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A {@link Store} served by a {@link TcpStoreServer}: the Ferry equivalent of c10d's {@code
 * TCPStore}. One process hosts the server; every process, that one included, is a client.
 *
 * <pre>{@code
 * // on every rank; rank 0 also hosts the server
 * TcpStoreOptions options = TcpStoreOptions.builder()
 *         .host(masterAddr).port(masterPort).server(rank == 0).timeout(Duration.ofSeconds(60)).build();
 * try (TcpStore store = TcpStore.create(options)) {
 *     store.set("rank/" + rank, address);
 *     byte[] master = store.get("rank/0");
 * }
 * }</pre>
 *
 * <p>Clients connect with retries until the timeout, so it does not matter whether the server or
 * its clients start first. A blocking {@code get} or {@code waitFor} is parked on the server until
 * the key is set, the timeout passes or either side closes: the client never polls. One client
 * connection carries any number of concurrent calls from any number of threads.
 *
 * <p>If the server goes away, calls blocked on it fail: with SHUTDOWN when the server was closed
 * in an orderly way, with UNAVAILABLE when the connection broke. The client does not reconnect.
 *
 * <p>This class is thread-safe.
 */
public final class TcpStore implements Store {
    private final Connection connection;
    private final Duration timeout;

    /** What a TcpStore and its {@link #withTimeout} views share, and close together. */
    private record Connection(StoreClient client, TcpStoreServer ownedServer) {
        void close() {
            try {
                client.close();
            } finally {
                if (ownedServer != null) {
                    ownedServer.close();
                }
            }
        }
    }

    private TcpStore(Connection connection, Duration timeout) {
        this.connection = connection;
        this.timeout = timeout;
    }

    /**
     * Starts the server first if {@code options.server()}, then connects a client to it. The
     * returned store owns that server: closing the store closes the server too.
     *
     * @throws RpcException RENDEZVOUS_FAILED if the server cannot bind its address or the client
     *     cannot connect within the timeout
     */
    public static TcpStore create(TcpStoreOptions options) {
        PeerAuthentication auth = options.authToken() == null ? null
                : PeerAuthentication.of(options.authToken(), options.authTimeout());
        if (!options.server()) {
            return new TcpStore(new Connection(StoreClient.connect(options.host(), options.port(), options.timeout(),
                    auth, options.tls()), null), options.timeout());
        }
        ConnectionLimits limits = new ConnectionLimits(options.authTimeout(), options.stallTimeout(),
                ConnectionLimits.DEFAULT_MAX_PENDING_HANDSHAKES);
        TcpStoreServer server = new TcpStoreServer(StoreServer.start(options.host(), options.port(), auth, options.tls(),
                limits));
        try {
            StoreClient client = StoreClient.connect(options.host(), server.port(), options.timeout(), auth, options.tls());
            return new TcpStore(new Connection(client, server), options.timeout());
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * Connects to a server at {@code host:port}, retrying until {@code timeout} (ZERO: forever),
     * which also becomes the store's default timeout.
     *
     * @throws RpcException RENDEZVOUS_FAILED if no server answers in time, INVALID_ARGUMENT for a
     *     port outside 1..65535
     */
    public static TcpStore connect(String host, int port, Duration timeout) {
        TcpStoreOptions options = TcpStoreOptions.builder().host(host).port(port).timeout(timeout).build();
        return create(options);
    }

    /** The {@code host:port} of the server this store talks to. */
    public String serverAddress() {
        return connection.client().target();
    }

    /** The server this store started and owns, if it was created with {@code server(true)}. */
    public Optional<TcpStoreServer> server() {
        return Optional.ofNullable(connection.ownedServer());
    }

    /** Whether the connection is usable (not closed, not lost). */
    public boolean isConnected() {
        return connection.client().isOpen();
    }

    /** Threads of this client still alive (its reader); 0 once {@link #close()} has returned. */
    public int liveThreads() {
        return connection.client().liveThreads();
    }

    @Override
    public void set(String key, byte[] value) {
        connection.client().set(StoreArguments.key(key), StoreArguments.value(value, "value"), timeout);
    }

    @Override
    public byte[] get(String key, Duration timeout) {
        return connection.client().get(StoreArguments.key(key), StoreArguments.timeout(timeout));
    }

    @Override
    public long add(String key, long delta) {
        return connection.client().add(StoreArguments.key(key), delta, timeout);
    }

    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        return connection.client().compareSet(StoreArguments.key(key), StoreArguments.value(expected, "expected"),
                StoreArguments.value(desired, "desired"), timeout);
    }

    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        connection.client().waitFor(StoreArguments.keys(keys), StoreArguments.timeout(timeout));
    }

    @Override
    public boolean check(List<String> keys) {
        return connection.client().check(StoreArguments.keys(keys), timeout);
    }

    @Override
    public boolean deleteKey(String key) {
        return connection.client().delete(StoreArguments.key(key), timeout);
    }

    @Override
    public long numKeys() {
        return connection.client().numKeys(timeout);
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    @Override
    public TcpStore withTimeout(Duration timeout) {
        return new TcpStore(connection, StoreArguments.timeout(timeout));
    }

    /** Closes the client connection, and the server if this store owns one. */
    @Override
    public void close() {
        connection.close();
    }

    @Override
    public String toString() {
        return "TcpStore[" + serverAddress() + (connection.ownedServer() != null ? ", server" : "") + "]";
    }
}
