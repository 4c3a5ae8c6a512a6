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
}
