package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.CallInfo;

/** Records {@link RpcCallEvent}s: a check per call while no recording wants them. Stateless. */
public final class CallEvents {
    private CallEvents() {
    }

    /** Starts an event for the call {@code info} if a recording wants it; it ends when {@code future} completes. */
    public static void observe(CallInfo info, long requestBytes, boolean system, RpcFuture<?> future) {
        RpcCallEvent event = new RpcCallEvent();
        if (!event.isEnabled()) {
            return;
        }
        event.begin();
        event.caller = info.caller().name();
        event.callee = info.callee().name();
        event.function = info.function();
        event.requestBytes = requestBytes;
        event.system = system;
        future.addDoneCallback(done -> {
            event.end();
            if (event.shouldCommit()) {
                event.outcome = done.failed() ? outcome(done.exceptionNow()) : "ok";
                event.commit();
            }
        });
    }

    /** "ok"'s counterpart: the code of an {@link RpcException}, else the failure's class. */
    public static String outcome(Throwable failure) {
        return failure instanceof RpcException rpc ? rpc.code().name() : failure.getClass().getName();
    }
}
