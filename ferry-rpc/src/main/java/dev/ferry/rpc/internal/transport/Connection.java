package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.OutboundMessage;

import java.util.function.Consumer;

/** One open connection. Thread-safe: any thread may send. */
public interface Connection {

    /**
     * Queues {@code message} for sending. Encoding happens on the calling thread: an encoding
     * failure (for example a message over the size limit) is thrown from here; a write failure
     * later is reported to {@code onFailure}, once.
     */
    void send(OutboundMessage message, Consumer<Throwable> onFailure);

    boolean isActive();

    /** Closes after the messages already queued are written. */
    void close();

    String remoteAddress();

    /** The value the owner attached (the agent attaches the peer's identity after the handshake). */
    Object attachment();

    void attach(Object value);
}
