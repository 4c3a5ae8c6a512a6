package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.OutboundMessage;

import java.util.function.Consumer;

/**
 * Everything that carries messages between this worker and one peer: a connection, and whatever
 * other routes the transport has to that peer (lanes, shared memory). The channel alone chooses the
 * route of each message, in one place per transport, from the message's {@link Delivery} and size;
 * every route keeps the same contract, so a caller never knows which one was taken. Thread-safe:
 * any thread may send.
 *
 * <p>Order: messages to the peer arrive in the order they were sent, except that an unordered one
 * may overtake a large message (over {@code Chunks.CHUNK_BYTES}) still in flight, or travel on a
 * route of its own. An ordered message is never overtaken and never overtakes.
 *
 * <p>A channel is also the {@link Responder} of the calls that arrive on its connection.
 */
public interface PeerChannel extends Responder {

    /**
     * Sends {@code message} as {@code delivery} says. Encoding happens on the calling thread: an
     * encoding failure (for example a message over the size limit) is thrown from here; a write
     * failure later is reported to {@code onFailure}, once. On an ordinary thread this may wait
     * (bounded) while the channel's send queue is full; a transport thread never waits.
     */
    void send(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure);

    /**
     * Sends a call whose calling thread will wait for its answer and nothing else, as
     * {@link #send} does, and may read that answer on the calling thread before returning (over a
     * route of its own, when the call's delivery and size allow and the thread may block). Either
     * way the answer reaches the listener ({@link TransportListener#onMessage}), and failures reach
     * the caller exactly as for {@link #send}: the caller waits for its answer afterwards as it
     * would after a send. Returns at the latest at {@code deadlineNanos} ({@link System#nanoTime};
     * 0: none), or at once with the thread's interrupt flag set if it is interrupted meanwhile (the
     * answer still reaches the listener when it comes).
     */
    default void exchange(OutboundMessage call, Delivery delivery, long deadlineNanos, Consumer<Throwable> onFailure) {
        send(call, delivery, onFailure);
    }

    /** The answers to the calls that came on this channel's connection go back on it. */
    @Override
    default void respond(OutboundMessage answer, Delivery delivery, Consumer<Throwable> onFailure) {
        send(answer, delivery, onFailure);
    }

    @Override
    boolean isActive();

    /**
     * Stops (true) or resumes (false) reading from this channel's connection, so a busy receiver
     * pushes back on its sender. Transports without flow control ignore it.
     */
    default void pauseReading(boolean paused) {
    }

    /** What carries this channel, for debug info: {@code "tcp"}, {@code "uds"}, {@code "uds+shm"}, {@code "in-process"}. */
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
