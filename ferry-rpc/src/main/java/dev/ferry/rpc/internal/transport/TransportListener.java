package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.InboundMessage;

/**
 * Receives what a {@link Transport} reads. Called on transport threads, which must never block
 * (implementations hand real work to other threads), except that a call may be delivered on a
 * thread dedicated to it, one that may block ({@link #onCall}).
 */
public interface TransportListener {
    /** A channel was accepted (not called for channels this side opened). */
    default void onAccepted(PeerChannel channel) {
    }

    /** A HELLO, REPLY or ERROR arrived on {@code channel}. */
    void onMessage(PeerChannel channel, InboundMessage message);

    /**
     * A CALL arrived from {@code channel}'s peer; its answer goes back through {@code responder}.
     * Calls of one channel come in the order they arrived; a call may come on a thread that reads
     * only that exchange and may block (see {@code DedicatedThreads}).
     */
    void onCall(PeerChannel channel, InboundMessage call, Responder responder);

    /** The channel closed; {@code cause} is null for an orderly close. */
    void onClosed(PeerChannel channel, Throwable cause);
}
