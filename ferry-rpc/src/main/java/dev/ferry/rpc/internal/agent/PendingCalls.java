package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.internal.transport.Connection;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The calls this worker sent and awaits answers to, by call id. Whoever removes a call from the
 * table (reply, timeout, connection loss, shutdown) is the one who completes it, so each call
 * completes exactly once and a late reply finds nothing and is dropped.
 *
 * <p>This class is thread-safe.
 */
final class PendingCalls {
    private final ConcurrentHashMap<Long, PendingCall> calls = new ConcurrentHashMap<>();
    private final AtomicInteger userCalls = new AtomicInteger();
    private final Object quiet = new Object();

    void add(PendingCall call) {
        calls.put(call.id, call);
        if (!call.system) {
            userCalls.incrementAndGet();
        }
    }

    /** Removes and returns the call, or null if it already ended (timed out, failed). */
    PendingCall remove(long id) {
        PendingCall call = calls.remove(id);
        if (call != null) {
            call.cancelTimeout();
            if (!call.system && userCalls.decrementAndGet() == 0) {
                synchronized (quiet) {
                    quiet.notifyAll();
                }
            }
        }
        return call;
    }

    /** Fails the call if it is still pending. */
    void fail(long id, RpcException error) {
        PendingCall call = remove(id);
        if (call != null) {
            FutureCompleter.tryFail(call.future, error);
        }
    }

    /** Fails every call sent on {@code connection}. */
    void failConnection(Connection connection, java.util.function.Function<PendingCall, RpcException> error) {
        for (PendingCall call : calls.values()) {
            if (call.connection == connection) {
                fail(call.id, error.apply(call));
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

    /** Calls the application made (not Ferry's own control calls) still awaiting answers. */
    int userCalls() {
        return userCalls.get();
    }

    /** Waits until no application call is pending; {@code timeout} zero means no limit. */
    boolean awaitNoUserCalls(java.time.Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        long limit = timeout.isZero() ? Long.MAX_VALUE : timeout.toNanos();
        synchronized (quiet) {
            while (userCalls.get() > 0) {
                long left = limit - (System.nanoTime() - start);
                if (left <= 0) {
                    return false;
                }
                quiet.wait(Math.max(1, Math.min(left / 1_000_000, 1_000)));
            }
            return true;
        }
    }
}
