package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.OutboundMessage;

import java.util.function.Consumer;

/**
 * One open connection. Thread-safe: any thread may send.
 *
 * <p>Order: messages of one connection are delivered in the order they were sent, except that a
 * message without headers may overtake a large message (over {@code Chunks.CHUNK_BYTES}) sent
 * before it whose chunks are still in flight. A message with headers is never overtaken and never
 * overtakes (the RRef protocol relies on that).
 */
public interface Connection {

    /**
     * Queues {@code message} for sending. Encoding happens on the calling thread: an encoding
     * failure (for example a message over the size limit) is thrown from here; a write failure
     * later is reported to {@code onFailure}, once. On an ordinary thread this may wait (bounded)
     * while the connection's send queue is full; a transport thread never waits.
     */
    void send(OutboundMessage message, Consumer<Throwable> onFailure);

    boolean isActive();

    /**
     * Stops (true) or resumes (false) reading from this connection, so a busy receiver pushes back
     * on its sender. Transports without flow control ignore it.
     */
    default void pauseReading(boolean paused) {
    }

    /**
     * Whether requests read from this connection run on the thread that read them, which may block
     * (a {@link SyncLaneConnection}'s own thread), rather than being handed to a request thread.
     */
    default boolean runsRequestsInline() {
        return false;
    }

    /** What carries this connection, for debug info: {@code "tcp"}, {@code "uds"}, {@code "in-process"}. */
    default String kind() {
        return "in-process";
    }

    /**
     * Closes gracefully: every message accepted for sending before the close is delivered to the
     * peer, which reports all of them before it reports the close (orderly, no cause), also when
     * it is paused or answers while this side closes. Later sends fail. What arrives here after
     * the close is dropped. A peer that does not take what is queued within a bound (a transport
     * setting) gets an abortive close instead: the unwritten messages fail with a TIMEOUT error
     * naming the peer. Abortive closes (peer dead, bad input, close timed out) fail what was not
     * written with their cause. Idempotent; never blocks.
     */
    void close();

    /**
     * Closes at once (abortive): what was not written yet fails with {@code cause}, which is also
     * what {@link TransportListener#onClosed} reports. The peer sees the connection end. Never blocks.
     * Transports that write everything at once (in-process) have nothing unwritten; they close.
     */
    default void abort(Throwable cause) {
        close();
    }

    String remoteAddress();

    /** The value the owner attached (the agent attaches the peer's identity after the handshake). */
    Object attachment();

    void attach(Object value);
}
