package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcAgent;

/** The agent whose request the current thread is running, for the static {@code Rpc} facade. */
public final class CurrentAgent {
    private static final ThreadLocal<RpcAgent> HANDLING = new ThreadLocal<>();

    private CurrentAgent() {
    }

    /** The agent running the current thread's request, or null outside request handlers. */
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
