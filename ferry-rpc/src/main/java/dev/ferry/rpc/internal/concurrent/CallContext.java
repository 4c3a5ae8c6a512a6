package dev.ferry.rpc.internal.concurrent;

/**
 * The request a thread works for: a handler running it, or a continuation of that handler
 * (a callback of an {@link dev.ferry.rpc.RpcFuture} registered while it ran). The calls made in
 * its name inherit its deadline and are cancelled with it.
 *
 * <p>The one object per request is the request itself (the agent's request extends this class),
 * so following a request costs no allocation; a callback registered inside one is wrapped once
 * ({@link #bind}), outside of one it is not.
 *
 * <p>The static methods are thread-safe; a subclass states its own contract.
 */
public abstract class CallContext {
    private static final ThreadLocal<CallContext> CURRENT = new ThreadLocal<>();

    /** The context of the current thread, or null: it works for no request. */
    public static CallContext current() {
        return CURRENT.get();
    }

    /** Makes {@code context} the current thread's; returns the one it replaces, for {@link #restore}. */
    public static CallContext enter(CallContext context) {
        CallContext previous = CURRENT.get();
        CURRENT.set(context);
        return previous;
    }

    /** Undoes {@link #enter}. */
    public static void restore(CallContext previous) {
        // Set, never removed: a thread that runs request after request (the warm request thread, a
        // lane's) keeps its one entry instead of allocating one at the next get or set.
        CURRENT.set(previous);
    }

    /**
     * {@code action} run in the current thread's context, wherever it runs later; {@code action}
     * itself when the thread has none.
     */
    public static Runnable bind(Runnable action) {
        CallContext context = CURRENT.get();
        if (context == null) {
            return action;
        }
        return () -> {
            CallContext previous = enter(context);
            try {
                action.run();
            } finally {
                restore(previous);
            }
        };
    }

    /**
     * When the caller of this request stops waiting for it, as {@link System#nanoTime()}; 0: the
     * caller set no deadline.
     */
    public abstract long deadline();

    /** Whether the caller cancelled this request (calls made for it then fail at once). */
    public abstract boolean cancelled();

    /** Who made the call, for messages ("worker0"). */
    public abstract String callerName();
}
