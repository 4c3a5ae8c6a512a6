package dev.ferry.rpc.internal.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The in-memory key-value map of a TCP store server, with blocking waits for keys.
 *
 * <p>One lock guards the map; every change signals one condition on which all parked waiters
 * sleep. Store traffic is rendezvous traffic (a few keys per rank), so waking every waiter on every
 * change is cheaper to reason about than per-key waiter lists, and costs nothing measurable.
 *
 * <p>This class is thread-safe. Waits use {@link ReentrantLock} conditions, which park virtual
 * threads without pinning their carrier.
 */
public final class KeyValueTable {

    /** Thrown by waits when the table is closed (the server is shutting down). */
    public static final class ClosedException extends Exception {
        private static final long serialVersionUID = 1L;

        ClosedException() {
            super("store server is shutting down", null, false, false);
        }
    }

    /** The result of a wait: the value (for a single-key get) or the keys still missing. */
    public record WaitResult(byte[] value, List<String> missingKeys, boolean cancelled) {
        public boolean satisfied() {
            return !cancelled && missingKeys.isEmpty();
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<String, byte[]> entries = new HashMap<>();
    private int parkedWaiters;
    private boolean closed;

    public void set(String key, byte[] value) {
        lock.lock();
        try {
            entries.put(key, value);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The value of {@code key}, or null if absent. */
    public byte[] getNow(String key) {
        lock.lock();
        try {
            return entries.get(key);
        } finally {
            lock.unlock();
        }
    }

    public long add(String key, long delta) {
        lock.lock();
        try {
            long updated = StoreSemantics.add(key, entries.get(key), delta);
            entries.put(key, StoreSemantics.encodeCounter(updated));
            changed.signalAll();
            return updated;
        } finally {
            lock.unlock();
        }
    }

    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        lock.lock();
        try {
            StoreSemantics.CompareSetOutcome outcome = StoreSemantics.compareSet(entries.get(key), expected, desired);
            if (outcome.toStore() != null) {
                entries.put(key, outcome.toStore());
                changed.signalAll();
            }
            return outcome.result();
        } finally {
            lock.unlock();
        }
    }

    public boolean delete(String key) {
        lock.lock();
        try {
            return entries.remove(key) != null;
        } finally {
            lock.unlock();
        }
    }

    public boolean containsAll(List<String> keys) {
        lock.lock();
        try {
            return missing(keys).isEmpty();
        } finally {
            lock.unlock();
        }
    }

    public long size() {
        lock.lock();
        try {
            return entries.size();
        } finally {
            lock.unlock();
        }
    }

    /** The state of {@code keys} right now, as {@link #await} would see it; never blocks. */
    public WaitResult peek(List<String> keys) {
        lock.lock();
        try {
            List<String> missing = missing(keys);
            byte[] value = missing.isEmpty() && keys.size() == 1 ? entries.get(keys.get(0)) : null;
            return new WaitResult(value, missing, false);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until all {@code keys} exist, the deadline passes, or {@code cancelled} turns true (it
     * is re-checked whenever {@link #wakeAll()} is called). For a single key the value is returned
     * too, read under the same lock so a concurrent delete cannot slip in between.
     */
    public WaitResult await(List<String> keys, Deadline deadline, BooleanSupplier cancelled)
            throws ClosedException, InterruptedException {
        lock.lock();
        try {
            parkedWaiters++;
            try {
                while (true) {
                    if (closed) {
                        throw new ClosedException();
                    }
                    List<String> missing = missing(keys);
                    if (missing.isEmpty()) {
                        byte[] value = keys.size() == 1 ? entries.get(keys.get(0)) : null;
                        return new WaitResult(value, List.of(), false);
                    }
                    if (cancelled.getAsBoolean()) {
                        return new WaitResult(null, missing, true);
                    }
                    if (deadline.expired()) {
                        return new WaitResult(null, missing, false);
                    }
                    if (deadline.isForever()) {
                        changed.await();
                    } else {
                        changed.awaitNanos(deadline.remainingNanos());
                    }
                }
            } finally {
                parkedWaiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    /** How many waits are currently parked; for tests and diagnostics. */
    public int parkedWaiters() {
        lock.lock();
        try {
            return parkedWaiters;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter so it re-checks its cancellation condition. */
    public void wakeAll() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter with {@link ClosedException}; later waits fail at once. */
    public void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private List<String> missing(List<String> keys) {
        List<String> missing = new ArrayList<>(0);
        for (String key : keys) {
            if (!entries.containsKey(key)) {
                missing.add(key);
            }
        }
        return missing;
    }
}
