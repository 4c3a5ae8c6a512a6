package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The calls in flight on one channel, to tell a message that is alone in a lockstep exchange
 * from one of many ({@link dev.ferry.rpc.internal.wire.Delivery#alone}): a call sent while none of
 * ours waits for its answer (it travels flagged {@link FrameCodec#FLAG_LONE}), or the answer to
 * such a call when it is the only call of the peer's this side has to answer. Such a message is
 * worth writing at once by its own thread (the transport's direct writes): its peer waits for it
 * and nothing else is coming to share a system call with. Anything else (a window of async calls, many callers, a backlog of requests) is left to
 * the event loop, which writes messages that follow each other closely in batches, one system call
 * for many; writing each on its sender's thread there cost W2 a third of its calls per second at
 * windows of 8 and 256 (over loopback TCP a write runs the receiver's side of the stack too).
 *
 * <pre>
 *   send CALL          ─▶ ours++     alone (and flagged LONE) if none of ours was waiting
 *   read CALL          ─▶ theirs++   remembered if flagged LONE
 *   send REPLY / ERROR ─▶ theirs--   alone if it answers that LONE call and no other call of theirs waits
 *   read REPLY / ERROR ─▶ ours--
 * </pre>
 * Every CALL is answered by one REPLY or ERROR, with its id, so the counts stay true while the
 * channel lives. They only choose how bytes move, never decide correctness. Call semantics are the
 * agent's: the transport only sees the resulting {@code Delivery}.
 *
 * <p>Thread-safe.
 */
final class CallBalance {
    private static final long NONE = Long.MIN_VALUE;
    /** This side's calls sent and not answered yet. */
    private final AtomicLong ours = new AtomicLong();
    /** The peer's calls read and not answered yet. */
    private final AtomicLong theirs = new AtomicLong();
    /** The id of the latest call read, if it was flagged LONE; else {@link #NONE}. */
    private volatile long loneCall = NONE;

    /**
     * A message of {@code kind} with {@code id} is being sent: whether it is alone in its exchange
     * (for a CALL: also whether to flag it {@link FrameCodec#FLAG_LONE}).
     */
    boolean sending(MessageKind kind, long id) {
        return switch (kind) {
            case CALL -> ours.getAndIncrement() == 0;
            case REPLY, ERROR -> theirs.getAndDecrement() == 1 && loneCall == id;
            case HELLO -> false;
        };
    }

    /** A message counted by {@link #sending} was not sent after all (it could not be encoded). */
    void withdrawn(MessageKind kind) {
        switch (kind) {
            case CALL -> ours.decrementAndGet();
            case REPLY, ERROR -> theirs.incrementAndGet();
            case HELLO -> {
            }
        }
    }

    /** A message was read. */
    void received(InboundMessage message) {
        switch (message.kind()) {
            case CALL -> {
                loneCall = message.lone() ? message.id() : NONE;
                theirs.incrementAndGet();
            }
            case REPLY, ERROR -> ours.decrementAndGet();
            case HELLO -> {
            }
        }
    }
}
