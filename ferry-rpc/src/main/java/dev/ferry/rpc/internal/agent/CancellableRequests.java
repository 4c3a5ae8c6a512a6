package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.WorkerInfo;
import io.netty.util.collection.LongObjectHashMap;

import java.util.function.LongSupplier;

/**
 * The application requests this worker received and has not answered yet, by caller and call id,
 * so that a caller's cancel message finds the one it means; and the cancels that came before their
 * call ({@link EarlyCancels}), so that the call is not run when it arrives. Keyed by a primitive
 * {@code long} in an open-addressing table: a request costs no key object and no map node, and no
 * lookup among early cancels while there is none.
 *
 * <p>This class is thread-safe (one lock, held for a table operation only): a cancel and its call
 * may arrive on different threads (a lane's and the connection's), and whichever comes second
 * finds the other.
 *
 * @param <R> what a request is here
 */
final class CancellableRequests<R> {
    private final LongObjectHashMap<R> requests = new LongObjectHashMap<>();
    private final EarlyCancels early;

    CancellableRequests() {
        this(System::nanoTime);
    }

    /** {@code clock} ages the early cancels: {@link System#nanoTime()}, or a test's. */
    CancellableRequests(LongSupplier clock) {
        this.early = new EarlyCancels(clock);
    }

    /**
     * The key of call {@code callId} from the worker of id {@code callerId}: call ids count up
     * from 1 per caller, and 48 bits of them last beyond any job.
     */
    static long key(int callerId, long callId) {
        return ((long) callerId << 48) ^ callId;
    }

    /**
     * Adds {@code request}, call {@code key} of {@code caller}, unless its cancel came first:
     * then returns false, and the request must not run.
     */
    synchronized boolean add(long key, WorkerInfo caller, R request) {
        if (!early.isEmpty() && early.take(key, caller)) {
            return false;
        }
        requests.put(key, request);
        return true;
    }

    /** Removes {@code request} if it is still the one under {@code key}. */
    synchronized void remove(long key, R request) {
        if (requests.get(key) == request) {
            requests.remove(key);
        }
    }

    /**
     * The request under {@code key}, for its caller's cancel; or null: answered already, or not
     * arrived yet, and then the cancel is remembered for it ({@link EarlyCancels}).
     */
    synchronized R cancelling(long key, WorkerInfo caller) {
        R request = requests.get(key);
        if (request == null) {
            early.remember(key, caller);
        }
        return request;
    }

    /** Forgets the early cancels of {@code caller}: a new incarnation replaced it, or it left. */
    synchronized void forget(WorkerInfo caller) {
        early.forget(caller);
    }

    synchronized int size() {
        return requests.size();
    }

    /** Early cancels still waiting for their calls. */
    synchronized int earlyCancels() {
        return early.size();
    }
}
