package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.MessageKind;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The calls in flight on one connection, each way, to tell a message that is alone in its exchange
 * from one of many: a call sent while none of ours waits for its answer, or an answer to the only
 * call of the peer's this side has to answer. Such a message is worth writing at once by its own
 * thread ({@link DirectWriter}): nothing else is coming to share a system call with. When several are
 * in flight (a window of async calls, many callers, a backlog of requests) messages follow each
 * other closely and the event loop writes them in batches, one system call for many: writing each
 * on its sender's thread there halved W2's calls per second at windows of 8 and more.
 *
 * <pre>
 *   send CALL          ─▶ ours++      alone if none of ours was waiting
 *   send REPLY / ERROR ─▶ theirs--    alone if it answers the only call of theirs
 *   read CALL          ─▶ theirs++
 *   read REPLY / ERROR ─▶ ours--
 * </pre>
 * Every CALL is answered by one REPLY or ERROR on the connection it came on, so the counts stay
 * true while the connection lives. They only choose a path, never decide correctness.
 *
 * <p>Thread-safe.
 */
final class CallBalance {
    /** This side's calls sent and not answered yet. */
    private final AtomicLong ours = new AtomicLong();
    /** The peer's calls read and not answered yet. */
    private final AtomicLong theirs = new AtomicLong();

    /** A message of {@code kind} is being sent: whether it is alone in its exchange. */
    boolean sending(MessageKind kind) {
        return switch (kind) {
            case CALL -> ours.getAndIncrement() == 0;
            case REPLY, ERROR -> theirs.getAndDecrement() == 1;
            case HELLO -> false;
        };
    }

    /** A message of {@code kind} was read. */
    void received(MessageKind kind) {
        switch (kind) {
            case CALL -> theirs.incrementAndGet();
            case REPLY, ERROR -> ours.decrementAndGet();
            case HELLO -> {
            }
        }
    }
}
