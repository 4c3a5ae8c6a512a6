package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.OutboundMessage;

/**
 * Synchronous-exchange lanes: for a call whose caller waits for it and nothing else
 * ({@link PeerChannel#exchange}), a socket of its own between two workers on which the calling
 * thread writes the request and reads the answer itself, while a thread of the callee dedicated to
 * that lane reads the request and, the agent's rule for such threads, runs it. Over the connection
 * a call passes through an event loop and a hand-off on each side; over a lane it wakes one thread
 * per side, as a C ping-pong does (W1 over a Unix socket: 7.2 µs against ~15 µs over the
 * connection, sitting s37). A lane carries one exchange at a time; a caller that finds every lane
 * busy uses the connection.
 *
 * <pre>
 *   caller thread ─acquire─▶ lane (idle → busy) ─request─▶ callee's lane thread: reads it, runs it
 *        ◀───────── answer, or "diverted" (the answer went over the connection) ──┘
 *   release (busy → idle); a lane broken, or left with an answer outstanding, is closed and reopened later
 * </pre>
 *
 * <p>Every lane belongs to one connection ({@link LaneOffer}): it is opened to the peer of that
 * connection, carries calls of that connection's peer and closes with it. What a lane carries is
 * decided here, in one place, and a message a lane cannot carry takes the connection, with the same
 * outcome: a request travels on a lane only if it is unordered, has no out-of-band buffers, is
 * small and its thread may block; an answer only if it is unordered (no interceptor context), has
 * no out-of-band buffers and is not large. A call's outcome never depends on the lane: a request
 * whose lane broke before it was written goes over the connection, and an answer the lane cannot
 * take goes over the connection ({@link LaneResponder}).
 *
 * <p>The classes: {@link LaneServer} accepts lanes (authenticating them without a thread each),
 * {@link PeerLanes} opens them and runs exchanges, {@link LaneResponder} answers on them,
 * {@link SyncLane} is one socket end.
 */
public final class Lanes {
    /** Requests up to this size (payload bytes) may go on a lane. */
    public static final int MAX_REQUEST_BYTES = 16 << 10;
    /** Answers over this size (payload bytes) go over the connection (its chunking and shared memory). */
    public static final int MAX_ANSWER_BYTES = 256 << 10;
    /** Frame bytes beyond the payload a lane allows: the fixed fields and a receiver mark. */
    private static final int FRAME_OVERHEAD = 1 << 10;
    /** Largest frame a callee reads on a lane. */
    static final int MAX_REQUEST_FRAME = MAX_REQUEST_BYTES + FRAME_OVERHEAD;
    /** Largest frame a caller reads on a lane. */
    static final int MAX_ANSWER_FRAME = MAX_ANSWER_BYTES + FRAME_OVERHEAD;
    /** The one-byte frame an accepting worker answers a lane's key with. */
    static final byte WELCOME = 0x57;

    private Lanes() {
    }

    /** Whether a lane may carry {@code call} from the calling thread. */
    public static boolean carriesRequest(OutboundMessage call, Delivery delivery) {
        return !delivery.ordered() && call.payload().outOfBand().isEmpty()
                && call.payload().totalBytes() <= MAX_REQUEST_BYTES && !NonBlockingThreads.currentIsNonBlocking();
    }

    /** Whether a lane may carry {@code answer}. */
    public static boolean carriesAnswer(OutboundMessage answer, Delivery delivery) {
        return !delivery.ordered() && answer.payload().outOfBand().isEmpty()
                && answer.payload().totalBytes() <= MAX_ANSWER_BYTES;
    }
}
