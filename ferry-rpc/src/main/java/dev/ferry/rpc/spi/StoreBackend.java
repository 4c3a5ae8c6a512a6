package dev.ferry.rpc.spi;

import java.util.concurrent.CompletableFuture;

/**
 * The few primitives of a versioned key-value service (etcd, ZooKeeper) that {@link BackedStore}
 * turns into the whole {@link dev.ferry.rpc.store.Store} contract. A backend holds one client
 * session; it knows nothing of store timeouts, counters or compare-and-set rules, which
 * {@code BackedStore} decides in one place for every backend.
 *
 * <p>Every method may block for a bounded time (the backend's own request timeout) and fails with
 * an {@link dev.ferry.rpc.RpcException} of code {@code UNAVAILABLE} when the service cannot be
 * reached, {@code INVALID_ARGUMENT} for a value the service refuses (too large). Implementations
 * are thread-safe.
 */
public interface StoreBackend extends AutoCloseable {

    /**
     * A value and the version the service gave it; the version is opaque to the caller and only
     * handed back to {@link #replace}.
     */
    record Versioned(byte[] value, long version) {
    }

    /** The value of {@code key} now, or null if it is absent. */
    Versioned read(String key);

    /** Stores {@code value}, replacing any value, as a key that outlives this session. */
    void write(String key, byte[] value);

    /**
     * Stores {@code value} only if {@code key} still holds {@code current} (null: only if the key is
     * still absent); returns whether it did. This is the one atomic step counters and
     * compare-and-set are built on.
     */
    boolean replace(String key, Versioned current, byte[] value);

    /**
     * Stores {@code value} as a key that the service deletes when this session ends: at {@link
     * #close()}, or when the process dies and the session expires (etcd lease, ZooKeeper session).
     */
    void writeEphemeral(String key, byte[] value);

    /** Deletes {@code key}; returns whether it existed. */
    boolean delete(String key);

    /** The number of keys this backend holds (under its prefix). */
    long count();

    /**
     * A future completed with the value of {@code key} as soon as the key exists (at once if it does
     * now). Cancelling the future stops the watch; the caller always completes or cancels it.
     */
    CompletableFuture<byte[]> whenPresent(String key);

    /** Ends the session: ephemeral keys are deleted, watches stop. Idempotent. */
    @Override
    void close();
}
