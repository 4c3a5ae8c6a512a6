package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.transport.Connection;
import dev.ferry.rpc.spi.CallInfo;

import java.util.concurrent.ScheduledFuture;

/** A call this worker sent and awaits the answer of. Mutable fields are set once, before sending. */
final class PendingCall {
    final long id;
    final CallInfo info;
    final RpcFuture<Object> future;
    final boolean system;
    /** The function called: its declared return type shapes the value the caller gets. */
    final FunctionRef function;
    volatile Connection connection;
    volatile ScheduledFuture<?> timeoutTask;

    PendingCall(long id, CallInfo info, RpcFuture<Object> future, boolean system, FunctionRef function) {
        this.function = function;
        this.id = id;
        this.info = info;
        this.future = future;
        this.system = system;
    }

    void cancelTimeout() {
        ScheduledFuture<?> task = timeoutTask;
        if (task != null) {
            task.cancel(false);
        }
    }
}
