package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.spi.CallInfo;

/** Records {@link RpcCallEvent}s: a check per call while no recording wants them. Stateless. */
public final class CallEvents {
    private CallEvents() {
    }

    /**
     * Starts an event for the call {@code info} if a recording wants it.
     *
     * @return the event, to {@link #finish} when the call's outcome is known; null if no recording wants it
     */
    public static RpcCallEvent start(CallInfo info, long requestBytes, boolean system) {
        RpcCallEvent event = new RpcCallEvent();
        if (!event.isEnabled()) {
            return null;
        }
        event.begin();
        event.caller = info.caller().name();
        event.callee = info.callee().name();
        event.function = info.function();
        event.requestBytes = requestBytes;
        event.system = system;
        return event;
    }

    /**
     * Ends and commits {@code event} (null: nothing recorded) with the call's outcome, {@code failure}
     * or null for success. Done before the caller's future completes, so whoever sees the outcome can
     * stop a recording and find the event in it.
     */
    public static void finish(RpcCallEvent event, Throwable failure) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.outcome = failure == null ? "ok" : outcome(failure);
            event.commit();
        }
    }

    /** "ok"'s counterpart: the code of an {@link RpcException}, else the failure's class. */
    public static String outcome(Throwable failure) {
        return failure instanceof RpcException rpc ? rpc.code().name() : failure.getClass().getName();
    }
}
