package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.InboundMessage;

/**
 * Receives what a {@link Transport} reads. Called on transport threads, which must never block:
 * implementations hand real work to other threads.
 */
public interface TransportListener {
    /** A connection was accepted (not called for connections this side opened). */
    default void onAccepted(Connection connection) {
    }

    void onMessage(Connection connection, InboundMessage message);

    /** The connection closed; {@code cause} is null for an orderly close. */
    void onClosed(Connection connection, Throwable cause);
}
