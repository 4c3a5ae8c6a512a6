package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.WorkerInfo;
import io.netty.util.collection.LongObjectHashMap;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Cancels that came before the call they cancel (a tombstone per call): the call, when it arrives,
 * is then not run. A cancel overtakes its call when the call travels on a lane while the cancel
 * goes over the connection, or when the call is a large one still in chunks (a cancel goes ahead
 * of them). Keyed as {@link CancellableRequests} keys requests; a tombstone also keeps its caller,
 * so that only the same worker's call matches it.
 *
 * <p>Bounded in entries ({@link #CAPACITY}) and in age ({@link #MAX_AGE_NANOS}): a cancel for a
 * call answered already (its caller's timeout raced the answer) or never sent finds nothing here
 * either, and its tombstone waits for a call that never comes. When the bound is reached the
 * oldest goes first; a call whose tombstone went runs as it did before tombstones (its answer is
 * dropped by its caller), never anything worse.
 *
 * <p>Why a stale tombstone never cancels another call: call ids count up from 1 per caller
 * incarnation and are never reused by it ({@link CancellableRequests#key}), and a caller's
 * tombstones are dropped when a new incarnation of it replaces it or it leaves ({@link #forget}),
 * before anything of the next one runs here.
 *
 * <p>Not thread-safe: {@link CancellableRequests} guards it with its lock.
 */
final class EarlyCancels {
    /**
     * Tombstones at most. Each is a call a caller cancelled in the moment it was on its way here:
     * 1,024, as many as the requests a worker queues before it stops reading (the default
     * {@code maxQueuedRequests}), is far more than callers have such calls at once, and it bounds
     * what a peer sending cancels for calls it never makes can cost: under 100 bytes each (the
     * tombstone, its slots in the table and the queue), under 100 KiB in all.
     */
    static final int CAPACITY = 1024;
    /**
     * How long a tombstone waits for its call. A cancel is sent only once its call was handed to a
     * connection or a lane ({@code DefaultRpcAgent.cancelRemotely}), so the call it overtook is
     * already on its way and arrives as fast as its remaining bytes do: a lane carries at most
     * 256 KiB, a large call's chunks flow at the connection's speed (a connection stalled mid-frame
     * is closed after two {@code stallTimeout}s, a minute by default). A minute covers that with
     * room to spare and clears a stale tombstone in time; a call later than that runs as before.
     */
    static final long MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final LongSupplier clock;
    private final LongObjectHashMap<Tombstone> byKey = new LongObjectHashMap<>();
    /** Oldest first; may hold tombstones taken since (they are no longer in {@link #byKey}). */
    private final ArrayDeque<Tombstone> byAge = new ArrayDeque<>();

    /** {@code clock}: {@link System#nanoTime()}, or a test's. */
    EarlyCancels(LongSupplier clock) {
        this.clock = clock;
    }

    /** Whether there is no tombstone (the common case: calls then cost no lookup here). */
    boolean isEmpty() {
        return byKey.isEmpty();
    }

    /** Call {@code key} of {@code caller} was cancelled before it arrived. */
    void remember(long key, WorkerInfo caller) {
        long now = clock.getAsLong();
        expire(now);
        if (byAge.size() >= CAPACITY) {
            drop(byAge.poll());
        }
        Tombstone tombstone = new Tombstone(key, caller, now);
        byKey.put(key, tombstone);
        byAge.add(tombstone);
    }

    /** Whether call {@code key} of {@code caller}, arriving now, was cancelled; its tombstone goes. */
    boolean take(long key, WorkerInfo caller) {
        expire(clock.getAsLong());
        Tombstone tombstone = byKey.remove(key);
        if (byKey.isEmpty()) {
            byAge.clear();
        }
        return tombstone != null && tombstone.caller.equals(caller);
    }

    /** Drops {@code caller}'s tombstones: a new incarnation of it replaced it, or it left. */
    void forget(WorkerInfo caller) {
        for (Tombstone tombstone : byAge) {
            if (tombstone.caller.equals(caller)) {
                drop(tombstone);
            }
        }
        if (byKey.isEmpty()) {
            byAge.clear();
        }
    }

    /** Tombstones waiting for their calls. */
    int size() {
        expire(clock.getAsLong());
        return byKey.size();
    }

    private void expire(long now) {
        while (!byAge.isEmpty() && now - byAge.peek().at >= MAX_AGE_NANOS) {
            drop(byAge.poll());
        }
    }

    /** Removes {@code tombstone} from the lookup, if it is still there (not taken, not replaced). */
    private void drop(Tombstone tombstone) {
        if (byKey.get(tombstone.key) == tombstone) {
            byKey.remove(tombstone.key);
        }
    }

    private record Tombstone(long key, WorkerInfo caller, long at) {
    }
}
