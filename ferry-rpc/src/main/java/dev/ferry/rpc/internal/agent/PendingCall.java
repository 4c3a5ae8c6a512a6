package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.internal.concurrent.CallContext;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.internal.observe.CallEvents;
import dev.ferry.rpc.internal.observe.ObservedCall;
import dev.ferry.rpc.internal.observe.RpcCallEvent;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.spi.CallInfo;


/**
 * A call this worker sent and awaits the answer of. Mutable fields are set once, before sending.
 * Whoever took it out of {@link PendingCalls} ends it with {@link #complete} or {@link #fail}.
 */
final class PendingCall {
    final long id;
    final CallInfo info;
    final RpcFuture<Object> future;
    final boolean system;
    /**
     * Whether the application waits for its answer: its own calls, and Ferry's calls made for it
     * ({@code toHere()}'s fetch, {@code type()}). Graceful shutdown waits for these.
     */
    final boolean forApplication;
    /** The function called: its declared return type shapes the value the caller gets. */
    final FunctionRef function;
    /** The channel it was sent on: it fails with it. */
    volatile PeerChannel connection;
    /** When the call times out ({@link System#nanoTime()}); 0: never. */
    volatile long deadline;
    /** The timeout the deadline came from, for the error message. */
    volatile long timeoutMillis;
    /** Whether the deadline is {@link #parent}'s (it came before the call's own timeout). */
    volatile boolean inherited;
    /**
     * The request this call was made for (a handler's nested call), or null: it is cancelled with
     * that request, and its deadline is at the latest that request's.
     */
    final CallContext parent;
    /** The Flight Recorder event of this call; null while no recording wants one. */
    private final RpcCallEvent event;
    /** The agent's totals; null for Ferry's own calls, which are not counted. */
    private final CallCounters counters;
    /** When the call was made ({@link System#nanoTime()}), for how long it took. */
    private final long startNanos;
    /** Its timeline, for the call observers following it; null when none does. */
    private final ObservedCall observed;

    PendingCall(long id, CallInfo info, RpcFuture<Object> future, boolean system, boolean forApplication,
                FunctionRef function, RpcCallEvent event, CallCounters counters, long startNanos, ObservedCall observed,
                CallContext parent) {
        this.parent = parent;
        this.startNanos = startNanos;
        this.observed = observed;
        this.function = function;
        this.id = id;
        this.info = info;
        this.future = future;
        this.system = system;
        this.forApplication = forApplication;
        this.event = event;
        this.counters = system ? null : counters;
    }

    /** Its answer, {@code bytes} long, was read (the next step decodes it). */
    void answered(long bytes) {
        if (observed != null) {
            observed.answered(bytes);
        }
    }

    /** Completes the caller's future with the answer. */
    void complete(Object value) {
        end(null);
        FutureCompleter.tryComplete(future, value);
    }

    /** Fails the caller's future. */
    void fail(Throwable failure) {
        end(failure);
        FutureCompleter.tryFail(future, failure);
    }

    private void end(Throwable failure) {
        CallEvents.finish(event, failure);
        if (observed != null) {
            observed.ended(failure);
        }
        if (counters != null) {
            counters.answered(failure, System.nanoTime() - startNanos);
        }
    }
}
