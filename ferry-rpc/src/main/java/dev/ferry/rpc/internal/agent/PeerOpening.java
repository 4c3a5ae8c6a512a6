package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.transport.PeerChannel;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;

/**
 * The connection to a peer, being opened or open, and the sends that wait for it: they run in the
 * order they were given. A {@link CompletableFuture} runs its own dependents last-in first-out, so
 * four sends made while the connection opened, each waiting with its own {@code whenComplete}, left
 * in the order 3 2 1 0, ordered messages included (a fetch went before the creation of its RRef).
 * Here each waiter follows the one before it, and a sender finds the connection {@link #openNow()
 * open} only once every earlier waiter has run, so that nothing it sends overtakes them.
 *
 * <p>This class is thread-safe. A waiter runs on the thread that completes the opening (a transport
 * thread), or at once on the thread that adds it when the waiters before it have run.
 */
final class PeerOpening extends CompletableFuture<PeerChannel> {
    /** Completes when the last waiter given so far has run; written under {@code this}. */
    private volatile CompletableFuture<?> last = this;

    /** An opening that is already open, for a connection the peer opened. */
    static PeerOpening opened(PeerChannel channel) {
        PeerOpening opening = new PeerOpening();
        opening.complete(channel);
        return opening;
    }

    /**
     * The channel if it is open and every waiter given before has run (the usual case: send on it
     * directly, with no stage per message); null otherwise: use {@link #whenOpen}.
     */
    PeerChannel openNow() {
        if (!isDone() || isCompletedExceptionally()) {
            return null;
        }
        return last.isDone() ? getNow(null) : null;
    }

    /**
     * Runs {@code action} with the channel, or with why it could not be opened, once the opening
     * is done and after every action given before. An exception it throws does not stop the ones
     * after it.
     */
    void whenOpen(BiConsumer<PeerChannel, Throwable> action) {
        CompletableFuture<Void> ran = new CompletableFuture<>();
        CompletableFuture<?> previous;
        synchronized (this) {
            previous = last;
            last = ran;
        }
        // Run outside the lock: a send may wait for room in the connection's queue.
        previous.whenComplete((ignored, ignoredError) -> {
            try {
                if (isCompletedExceptionally()) {
                    action.accept(null, cause());
                } else {
                    action.accept(getNow(null), null);
                }
            } finally {
                ran.complete(null);
            }
        });
    }

    private Throwable cause() {
        if (isCancelled()) {
            return new CancellationException("the connection's opening was cancelled");
        }
        Throwable failure = exceptionNow();
        return failure instanceof CompletionException wrapped && wrapped.getCause() != null ? wrapped.getCause() : failure;
    }
}
