package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcAgent;

/**
 * The agent the current thread works for (running one of its requests, or one of its transport
 * and timer threads, where future callbacks run), for the static {@code Rpc} facade.
 */
public final class CurrentAgent {
    private static final ThreadLocal<RpcAgent> HANDLING = new ThreadLocal<>();

    private CurrentAgent() {
    }

    /** The agent the current thread works for, or null for application threads. */
    public static RpcAgent handling() {
        return HANDLING.get();
    }

    static void set(RpcAgent agent) {
        HANDLING.set(agent);
    }

    static void clear() {
        HANDLING.remove();
    }

    /**
     * Makes {@code agent} the current thread's and returns the one it replaces (null: none), for
     * {@link #restore} once the work is done: a thread that runs a request in passing (a transport
     * or lane thread) keeps whatever it had.
     */
    static RpcAgent enter(RpcAgent agent) {
        RpcAgent previous = HANDLING.get();
        HANDLING.set(agent);
        return previous;
    }

    /** Undoes {@link #enter}. */
    static void restore(RpcAgent previous) {
        if (previous != null) {
            HANDLING.set(previous);
        } else {
            HANDLING.remove();
        }
    }
}
