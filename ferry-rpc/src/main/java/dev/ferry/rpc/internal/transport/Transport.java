package dev.ferry.rpc.internal.transport;

import java.util.concurrent.CompletableFuture;

/**
 * Moves framed messages between workers. A transport listens for channels, opens channels to
 * addresses ({@link PeerChannel}: every route to one peer), and reports what arrives to its
 * {@link TransportListener}. It knows the kinds of messages (a CALL is answered through the
 * {@link Responder} delivered with it) and nothing of workers, call semantics or handshakes:
 * those are the agent's.
 */
public interface Transport extends AutoCloseable {

    /** Starts listening; returns the address peers connect to ({@code host:port} for TCP). */
    String start(TransportListener listener);

    /** Opens a channel to {@code address}; the future fails if that is not possible. */
    CompletableFuture<PeerChannel> connect(String address);

    /** A short description for debug info, e.g. {@code "netty-epoll"}. */
    String describe();

    /** More debug info (counters of optional channels), keys starting with {@code transport.}. */
    default java.util.Map<String, String> debugInfo() {
        return java.util.Map.of();
    }

    /**
     * Closes every channel gracefully ({@link PeerChannel#close}, bounded) and stops listening;
     * waits until the transport's threads end.
     */
    @Override
    void close();

    /**
     * As {@link #close}, but channels close at once ({@link PeerChannel#abort}): what they have
     * not written fails with {@code cause}. For a shutdown that must not send anything more.
     */
    default void closeNow(Throwable cause) {
        close();
    }
}
