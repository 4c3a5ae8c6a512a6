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
 * Sends an idempotent control message again when its send fails, in one of two ways.
 *
 * <p>{@link #send} is PyTorch's {@code sendWithRetries}: a send that failed with
 * {@link RpcException.Code#UNAVAILABLE} (the message did not reach its peer) is made again, up to
 * {@value #MAX_RETRIES} more times, {@link #FIRST_RETRY} after the first failure and twice as long
 * after each next one (50, 100, 200, 400, 800 ms: 1.55 s in all). Any other failure (the peer ran
 * the message and failed, a timeout: it may have arrived) ends the tries, and so does
 * {@code retryAllowed} turning false (the sender is closing).
 *
 * <p>{@link #untilDelivered} is for a message that must get through for as long as its peer is
 * a member of the group (a release of something the peer holds: given up, it would stay there for
 * good): it is sent again after the same waits, then every {@link #MAX_INTERVAL} at most
 * ({@link #retryDelayNanos}), on {@code UNAVAILABLE} or {@code TIMEOUT} (it may have arrived:
 * the receiver ignores a repeat), for as long as {@code retryAllowed} holds, which it asks again
 * before each resend; after {@value #QUIET_SENDS} failed sends it logs one warning. Ferry's RRef
 * protocol sends its messages so, and {@link DeliveryQueues} (one message at a time per peer,
 * carrying what waits for it) is built on it.
 *
 * <p>For messages that may arrive twice: the receiver must ignore a repeat (a release of
 * something already released).
 *
 * <pre>{@code
 * RpcFuture<Boolean> released = RetriedSends.untilDelivered("release of context 7 on worker2",
 *         () -> agent.rpcAsync("worker2", Calls::release, 7L), () -> isMember("worker2"), RetriedSends::onVirtualThread);
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
    /** The longest wait between two sends of a message sent {@link #untilDelivered}. */
    public static final Duration MAX_INTERVAL = Duration.ofSeconds(5);
    /**
     * After this many failed sends (as many as {@link #send} makes, 1.55 s), a message sent
     * {@link #untilDelivered} that still did not get through is worth a warning.
     */
    public static final int QUIET_SENDS = 1 + MAX_RETRIES;

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
        new Attempts<>(what, send, retryAllowed, scheduler, outcome, MAX_RETRIES).attempt(0);
        return outcome;
    }

    /**
     * Sends with {@code send} until it gets through: again on {@code UNAVAILABLE} or
     * {@code TIMEOUT}, after {@link #retryDelayNanos}, while {@code retryAllowed} holds (asked when a
     * send fails and again before its resend). Returns the outcome of the last attempt, as
     * {@link #send} does; the caller may end it itself, and no resend follows.
     */
    public static <T> RpcFuture<T> untilDelivered(String what, Supplier<RpcFuture<T>> send, BooleanSupplier retryAllowed,
                                                  Scheduler scheduler) {
        RpcFuture<T> outcome = new RpcFuture<>();
        new Attempts<>(what, send, retryAllowed, scheduler, outcome, Integer.MAX_VALUE).attempt(0);
        return outcome;
    }

    /**
     * The wait before resend number {@code failures} (1 after the first failed send) of a message
     * sent {@link #untilDelivered}: {@link #FIRST_RETRY}, doubling, at most {@link #MAX_INTERVAL}.
     */
    public static long retryDelayNanos(int failures) {
        return Math.min(FIRST_RETRY.toNanos() << Math.min(Math.max(failures, 1) - 1, 20), MAX_INTERVAL.toNanos());
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

    /** The tries of one message: at most {@code maxRetries} resends ({@link Integer#MAX_VALUE}: until delivered). */
    private record Attempts<T>(String what, Supplier<RpcFuture<T>> send, BooleanSupplier retryAllowed,
                               Scheduler scheduler, RpcFuture<T> outcome, int maxRetries) {

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
                } else if (retries < maxRetries && retriable(done.exceptionNow())) {
                    long delay = untilDelivered() ? retryDelayNanos(retries + 1) : FIRST_RETRY.toNanos() << retries;
                    if (untilDelivered() && retries + 1 == QUIET_SENDS) {
                        log.warn("{} failed {} times; sending it again, every {} s at most, while its peer is a member: {}",
                                what, retries + 1, MAX_INTERVAL.toSeconds(), done.exceptionNow().toString());
                    } else {
                        log.debug("{} failed, sending it again in {} ms: {}", what, delay / 1_000_000,
                                done.exceptionNow().toString());
                    }
                    scheduler.schedule(() -> resend(retries + 1, done.exceptionNow()), delay);
                } else {
                    FutureCompleter.tryFail(outcome, done.exceptionNow());
                }
            });
        }

        private void resend(int retries, Throwable lastFailure) {
            if (untilDelivered() && !retryAllowed.getAsBoolean()) {
                FutureCompleter.tryFail(outcome, lastFailure); // its peer went, or the sender closed, meanwhile
                return;
            }
            attempt(retries);
        }

        private boolean untilDelivered() {
            return maxRetries == Integer.MAX_VALUE;
        }

        private boolean retriable(Throwable failure) {
            return failure instanceof RpcException e && (e.code() == RpcException.Code.UNAVAILABLE
                    || untilDelivered() && e.code() == RpcException.Code.TIMEOUT) && retryAllowed.getAsBoolean();
        }
    }
}
