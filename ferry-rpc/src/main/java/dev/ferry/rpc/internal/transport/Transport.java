package dev.ferry.rpc.internal.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Moves framed messages between workers. A transport listens for connections, opens connections
 * to addresses, and reports what arrives to its {@link TransportListener}. It knows nothing of
 * calls, workers or handshakes: those are the agent's.
 */
public interface Transport extends AutoCloseable {

    /** Starts listening; returns the address peers connect to ({@code host:port} for TCP). */
    String start(TransportListener listener);

    /** Opens a connection to {@code address}; the future fails if that is not possible. */
    CompletableFuture<Connection> connect(String address);

    /**
     * This transport's synchronous-exchange lanes ({@link SyncLanes}), or null when it has none
     * (off, TLS, authentication, or a transport without sockets). Available once started.
     */
    default SyncLanes syncLanes() {
        return null;
    }

    /** A short description for debug info, e.g. {@code "netty-epoll"}. */
    String describe();

    /** More debug info (counters of optional channels), keys starting with {@code transport.}. */
    default java.util.Map<String, String> debugInfo() {
        return java.util.Map.of();
    }

    /**
     * Closes every connection gracefully ({@link Connection#close}, bounded) and stops listening;
     * waits until the transport's threads end.
     */
    @Override
    void close();

    /**
     * As {@link #close}, but connections close at once ({@link Connection#abort}): what they have
     * not written fails with {@code cause}. For a shutdown that must not send anything more.
     */
    default void closeNow(Throwable cause) {
        close();
    }
}
