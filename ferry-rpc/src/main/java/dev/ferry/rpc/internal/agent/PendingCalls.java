package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.transport.PeerChannel;

import java.util.concurrent.ConcurrentHashMap;
import dev.ferry.rpc.internal.concurrent.ActivityCounter;

/**
 * The calls this worker sent and awaits answers to, by call id. Whoever removes a call from the
 * table (reply, timeout, connection loss, shutdown) is the one who completes it, so each call
 * completes exactly once and a late reply finds nothing and is dropped.
 *
 * <p>This class is thread-safe.
 */
final class PendingCalls {
    private final ConcurrentHashMap<Long, PendingCall> calls = new ConcurrentHashMap<>();
    private final ActivityCounter applicationCalls = new ActivityCounter();
    /** Told of each call that timed out, on the timer thread: its callee may still be working on it. */
    private final java.util.function.Consumer<PendingCall> timedOut;

    PendingCalls(java.util.function.Consumer<PendingCall> timedOut) {
        this.timedOut = timedOut;
    }

    void add(PendingCall call) {
        calls.put(call.id, call);
        if (call.forApplication) {
            applicationCalls.increment();
        }
    }

    /** The call with this id, or null if it ended (answered, timed out, failed). */
    PendingCall get(long id) {
        return calls.get(id);
    }

    /** Removes and returns the call, or null if it already ended (timed out, failed). */
    PendingCall remove(long id) {
        PendingCall call = calls.remove(id);
        if (call != null) {
            if (call.forApplication) {
                applicationCalls.decrement();
            }
        }
        return call;
    }

    /** Fails the call if it is still pending. */
    void fail(long id, RpcException error) {
        PendingCall call = remove(id);
        if (call != null) {
            call.fail(error);
        }
    }

    /**
     * Fails the calls whose deadline is not after {@code now} with a timeout; returns the earliest
     * deadline of the others ({@code Long.MAX_VALUE}: none has one). The agent's timer runs this.
     */
    long expire(long now) {
        long earliest = Long.MAX_VALUE;
        for (PendingCall call : calls.values()) {
            long deadline = call.deadline;
            if (deadline == 0) {
                continue;
            }
            if (deadline - now <= 0) {
                PendingCall expired = remove(call.id);
                if (expired != null) {
                    expired.fail(timeout(expired));
                    timedOut.accept(expired);
                }
            } else if (deadline < earliest) {
                earliest = deadline;
            }
        }
        return earliest;
    }

    private static RpcException timeout(PendingCall call) {
        if (call.inherited) {
            return new RpcException(RpcException.Code.TIMEOUT, "RPC ran past the deadline it inherited from the call"
                    + " it was made for (" + call.timeoutMillis + " ms left of the caller's deadline when it was made,"
                    + " from " + call.parent.callerName() + ") and will now be marked with an error: "
                    + call.info.function() + " on " + call.info.callee().name());
        }
        return new RpcException(RpcException.Code.TIMEOUT, "RPC ran for more than set timeout ("
                + call.timeoutMillis + " ms) and will now be marked with an error: " + call.info.function()
                + " on " + call.info.callee().name());
    }

    /** The calls still pending that were made for {@code parent} (a request being handled). */
    java.util.List<PendingCall> madeFor(dev.ferry.rpc.internal.concurrent.CallContext parent) {
        java.util.List<PendingCall> children = new java.util.ArrayList<>();
        for (PendingCall call : calls.values()) {
            if (call.parent == parent) {
                children.add(call);
            }
        }
        return children;
    }

    /** Fails every call sent on {@code connection}. */
    void failConnection(PeerChannel connection, java.util.function.Function<PendingCall, RpcException> error) {
        for (PendingCall call : calls.values()) {
            if (call.connection == connection) {
                fail(call.id, error.apply(call));
            }
        }
    }

    /** Fails every call to the worker named {@code callee}, whatever carries it. */
    void failCallee(String callee, RpcException error) {
        for (PendingCall call : calls.values()) {
            if (call.info.callee().name().equals(callee)) {
                fail(call.id, error);
            }
        }
    }

    /** Fails every pending call. */
    void failAll(RpcException error) {
        for (Long id : calls.keySet()) {
            fail(id, error);
        }
    }

    int size() {
        return calls.size();
    }

    /**
     * Calls still awaiting answers that the application waits for ({@link PendingCall#forApplication}):
     * its own, and Ferry's made for it, not Ferry's protocol messages.
     */
    int applicationCalls() {
        return applicationCalls.get();
    }

    /** Waits until no application call is pending; {@code timeout} zero means no limit. */
    boolean awaitNoApplicationCalls(java.time.Duration timeout) throws InterruptedException {
        return applicationCalls.awaitZero(timeout);
    }
}
