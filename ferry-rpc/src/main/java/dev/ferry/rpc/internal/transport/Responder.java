package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.OutboundMessage;

import java.util.function.Consumer;

/**
 * How the answer to one call goes back to its caller: the transport hands one with each call it
 * delivers ({@link TransportListener#onCall}) and knows which route may carry the answer (the one
 * the call came on, or the caller's connection when that route cannot carry it). Thread-safe: an
 * answer may be sent from whatever thread finished the call.
 */
public interface Responder {
    /**
     * Sends the answer (a REPLY or ERROR with the call's id), as {@link PeerChannel#send} sends:
     * encoding failures are thrown, write failures reported to {@code onFailure}, once.
     */
    void respond(OutboundMessage answer, Delivery delivery, Consumer<Throwable> onFailure);

    /** Whether an answer can still reach the caller. */
    boolean isActive();
}
