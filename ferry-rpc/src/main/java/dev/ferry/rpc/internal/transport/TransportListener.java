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

    /**
     * A synchronous-exchange lane was opened to this worker ({@link SyncLanes}) with
     * {@code preface}: attach the peer and return true, or return false to refuse it. Messages read
     * from it then come to {@link #onMessage} on the lane's own thread, which may block.
     */
    default boolean onLaneAccepted(SyncLaneConnection lane, byte[] preface) {
        return false;
    }

    /** The connection closed; {@code cause} is null for an orderly close. */
    void onClosed(Connection connection, Throwable cause);
}
