package dev.ferry.rpc.internal.agent;

import io.netty.util.collection.LongObjectHashMap;

/**
 * The application requests this worker received and has not answered yet, by caller and call id,
 * so that a caller's cancel message finds the one it means. Keyed by a primitive {@code long} in
 * an open-addressing table: a request costs no key object and no map node.
 *
 * <p>This class is thread-safe (one lock, held for a table operation only).
 *
 * @param <R> what a request is here
 */
final class CancellableRequests<R> {
    private final LongObjectHashMap<R> requests = new LongObjectHashMap<>();

    /**
     * The key of call {@code callId} from the worker of id {@code callerId}: call ids count up
     * from 1 per caller, and 48 bits of them last beyond any job.
     */
    static long key(int callerId, long callId) {
        return ((long) callerId << 48) ^ callId;
    }

    synchronized void add(long key, R request) {
        requests.put(key, request);
    }

    /** Removes {@code request} if it is still the one under {@code key}. */
    synchronized void remove(long key, R request) {
        if (requests.get(key) == request) {
            requests.remove(key);
        }
    }

    /** The request under {@code key}, or null: answered already, or never received. */
    synchronized R get(long key) {
        return requests.get(key);
    }

    synchronized int size() {
        return requests.size();
    }
}
