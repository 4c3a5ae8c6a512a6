package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Sends an idempotent control message again when its send fails, as Ferry's RRef protocol sends
 * its own and as PyTorch's {@code sendWithRetries} does: a send that failed with
 * {@link RpcException.Code#UNAVAILABLE} (the message did not reach its peer) is made again, up to
 * {@value #MAX_RETRIES} more times, {@link #FIRST_RETRY} after the first failure and twice as long
 * after each next one (50, 100, 200, 400, 800 ms: 1.55 s in all). Any other failure (the peer ran
 * the message and failed, a timeout: it may have arrived) ends the tries, and so does
 * {@code retryAllowed} turning false (the sender is closing).
 *
 * <p>For messages that may arrive twice: the receiver must ignore a repeat (a release of
 * something already released). Libraries use it for their own control messages; one that must get
 * through for as long as its peer is a member (ferry-distributed's release of a distributed
 * autograd context) goes on past these tries on the same {@link Scheduler}, with the same first waits.
 *
 * <pre>{@code
 * RpcFuture<Boolean> released = RetriedSends.send("release of context 7 on worker2",
 *         () -> agent.rpcAsync("worker2", Calls::release, 7L), agent::isRunning, RetriedSends::onVirtualThread);
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class RetriedSends {
    private static final Logger log = LoggerFactory.getLogger(RetriedSends.class);

    /** Retries of a message whose send failed, after the first attempt. */
    public static final int MAX_RETRIES = 5;
    /** The wait before the first retry; each later one waits twice as long as the one before. */
    public static final Duration FIRST_RETRY = Duration.ofMillis(50);

    private RetriedSends() {
    }

    /** Runs a retry later, on a thread that may send (a send may wait for room in a full send queue). */
    @FunctionalInterface
    public interface Scheduler {
        void schedule(Runnable task, long delayNanos);
    }

    /**
     * Sends with {@code send}, again on a retriable failure. Returns the outcome of the last
     * attempt: its result, or its failure (also when {@code send} itself throws, which is not
     * retried: the message could not even be made). {@code what} names the message in the log.
     * The caller may end the outcome itself (its peer is gone): no retry is sent after that.
     */
    public static <T> RpcFuture<T> send(String what, Supplier<RpcFuture<T>> send, BooleanSupplier retryAllowed,
                                        Scheduler scheduler) {
        RpcFuture<T> outcome = new RpcFuture<>();
        new Attempts<>(what, send, retryAllowed, scheduler, outcome).attempt(0);
        return outcome;
    }

    /**
     * A scheduler for callers without a timer of their own: the JDK's delayed executor, each
     * retry then on a virtual thread of its own (never on the JDK's timer thread, which a send
     * waiting for room must not hold).
     */
    public static void onVirtualThread(Runnable task, long delayNanos) {
        java.util.concurrent.CompletableFuture.delayedExecutor(delayNanos, java.util.concurrent.TimeUnit.NANOSECONDS,
                runnable -> Thread.ofVirtual().name("ferry-retried-send").start(runnable)).execute(task);
    }

    /** The tries of one message. */
    private record Attempts<T>(String what, Supplier<RpcFuture<T>> send, BooleanSupplier retryAllowed,
                               Scheduler scheduler, RpcFuture<T> outcome) {

        void attempt(int retries) {
            if (outcome.done()) {
                return; // ended by its caller while it waited to be sent again
            }
            RpcFuture<T> sent;
            try {
                sent = send.get();
            } catch (RuntimeException e) {
                FutureCompleter.tryFail(outcome, e);
                return;
            }
            sent.addDoneCallback(done -> {
                if (!done.failed()) {
                    FutureCompleter.tryComplete(outcome, done.value());
                } else if (retries < MAX_RETRIES && retriable(done.exceptionNow())) {
                    long delay = FIRST_RETRY.toNanos() << retries;
                    log.debug("{} failed, sending it again in {} ms: {}", what, delay / 1_000_000,
                            done.exceptionNow().toString());
                    scheduler.schedule(() -> attempt(retries + 1), delay);
                } else {
                    FutureCompleter.tryFail(outcome, done.exceptionNow());
                }
            });
        }

        private boolean retriable(Throwable failure) {
            return failure instanceof RpcException e && e.code() == RpcException.Code.UNAVAILABLE
                    && retryAllowed.getAsBoolean();
        }
    }
}
