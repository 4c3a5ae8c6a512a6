package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallInfo;
import jdk.jfr.FlightRecorder;

/**
 * Records {@link RpcCallEvent}s and {@link RpcHandleEvent}s: a check per call while no recording
 * wants them. Stateless.
 *
 * <p>Nothing here touches an event class while the JVM's Flight Recorder is not initialized (no
 * {@code -XX:StartFlightRecording}, no {@code jcmd JFR.start}, no {@code Recording} made in the
 * application): initializing an event class registers it, and the first registration loads the
 * recorder's whole metadata (~14,000 strings read), tens of milliseconds of CPU plus the JIT's
 * compiles of what that ran, which landed in an idle worker's first seconds after init (W1's idle
 * probe read 1.1-1.9 % of a core instead of 0.3-0.5 % where they did). A recording started later
 * initializes the recorder; the next call then registers the events, with that recording's settings.
 */
public final class CallEvents {
    private CallEvents() {
    }

    /** Whether an event may be wanted: the Flight Recorder is initialized (a cheap volatile read). */
    private static boolean recorderInitialized() {
        return FlightRecorder.isInitialized();
    }

    /**
     * Starts an event for the call {@code info} if a recording wants it.
     *
     * @return the event, to {@link #finish} when the call's outcome is known; null if no recording wants it
     */
    public static RpcCallEvent start(CallInfo info, long requestBytes, boolean system) {
        if (!recorderInitialized()) {
            return null;
        }
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

    /**
     * Begins the event of a request this worker runs, if a recording may want it.
     *
     * @return the event, to {@link #finishRequest} when the request has been answered; null if none
     */
    public static RpcHandleEvent beginRequest() {
        if (!recorderInitialized()) {
            return null;
        }
        RpcHandleEvent event = new RpcHandleEvent();
        if (!event.isEnabled()) {
            return null;
        }
        event.begin();
        return event;
    }

    /**
     * Ends and commits {@code event} (null: nothing recorded): the request from {@code caller} to
     * {@code function}, its size, whether it answered later ({@code @AsyncExecution}) and how it ended.
     */
    public static void finishRequest(RpcHandleEvent event, WorkerInfo caller, String function, long requestBytes,
                                     boolean asynchronous, String outcome) {
        if (event == null) {
            return;
        }
        event.end();
        if (event.shouldCommit()) {
            event.caller = caller.name();
            event.function = function;
            event.requestBytes = requestBytes;
            event.asynchronous = asynchronous;
            event.outcome = outcome;
            event.commit();
        }
    }

    /** "ok"'s counterpart: the code of an {@link RpcException}, else the failure's class. */
    public static String outcome(Throwable failure) {
        return failure instanceof RpcException rpc ? rpc.code().name() : failure.getClass().getName();
    }
}
