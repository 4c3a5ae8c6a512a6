package dev.ferry.rpc.internal.concurrent;

import java.util.Objects;

import dev.ferry.rpc.RpcFuture;

/**
 * The agent's write side of {@link RpcFuture}: completion that reports, instead of throwing,
 * whether it won. The agent races a reply against its timeout and against shutdown; whichever
 * comes first completes the future and the others see {@code false}.
 *
 * <pre>{@code
 * RpcFuture<Object> reply = new RpcFuture<>();
 * timer.schedule(() -> FutureCompleter.tryFail(reply, new RpcException(Code.TIMEOUT, "...")), 5, SECONDS);
 * boolean won = FutureCompleter.tryComplete(reply, decoded);   // false if the timeout came first
 * }</pre>
 *
 * <p>Users complete futures with {@link RpcFuture#setResult} / {@link RpcFuture#setException},
 * which throw on a second completion as PyTorch's do; these non-throwing variants stay out of the
 * public API. {@link RpcFuture} hands its package-private methods to this class once, when it is
 * initialized (the JDK's "shared secrets" pattern), so no reflection is involved.
 *
 * <p>This class is thread-safe.
 */
public final class FutureCompleter {
    /** Implemented by {@link RpcFuture}; not for any other use. */
    public interface Access {
        <T> RpcFuture<T> newFuture(AdaptiveSpin spin);

        <T> RpcFuture<T> newCallFuture(AdaptiveSpin spin, Canceller canceller, long callId);

        <T> boolean tryComplete(RpcFuture<T> future, T value);

        boolean tryFail(RpcFuture<?> future, Throwable failure);
    }

    /**
     * What {@link RpcFuture#cancel} of a call's future asks of the agent that made the call: fail
     * it with {@code CANCELLED} and tell the callee, unless it already ended.
     */
    public interface Canceller {
        /** Returns whether this cancelled the call (false: it had ended already). */
        boolean cancel(long callId, boolean interrupt);
    }

    private static volatile Access access;

    private FutureCompleter() {
    }

    /**
     * Called once by {@link RpcFuture}'s static initializer.
     *
     * @throws IllegalStateException on a second call
     */
    public static synchronized void setAccess(Access rpcFutureAccess) {
        if (access != null) {
            throw new IllegalStateException("RpcFuture access is already set");
        }
        access = Objects.requireNonNull(rpcFutureAccess, "rpcFutureAccess");
    }

    /**
     * A new incomplete future whose {@code await} polls through {@code spin} before it parks (its
     * agent's; null: it parks at once), as the futures derived from it do.
     */
    public static <T> RpcFuture<T> newFuture(AdaptiveSpin spin) {
        return access().newFuture(spin);
    }

    private static Access access() {
        Access current = access;
        if (current == null) {
            new RpcFuture<Void>(); // initializes RpcFuture, which sets the access
            current = access;
        }
        return current;
    }

    /**
     * As {@link #newFuture}, for call {@code callId}: its {@code cancel} goes to {@code canceller}
     * (no object per call: the future keeps the two).
     */
    public static <T> RpcFuture<T> newCallFuture(AdaptiveSpin spin, Canceller canceller, long callId) {
        return access().newCallFuture(spin, Objects.requireNonNull(canceller, "canceller"), callId);
    }

    /**
     * Completes {@code future} with {@code value} (null allowed) unless it is already complete.
     *
     * @return true if this call completed the future, false if it was already complete
     */
    public static <T> boolean tryComplete(RpcFuture<T> future, T value) {
        Objects.requireNonNull(future, "future");
        // Non-null here: an RpcFuture instance exists, so its class initializer has run.
        return access.tryComplete(future, value);
    }

    /**
     * Fails {@code future} with {@code failure} unless it is already complete.
     *
     * @return true if this call completed the future, false if it was already complete
     */
    public static boolean tryFail(RpcFuture<?> future, Throwable failure) {
        Objects.requireNonNull(future, "future");
        Objects.requireNonNull(failure, "failure");
        return access.tryFail(future, failure);
    }
}
