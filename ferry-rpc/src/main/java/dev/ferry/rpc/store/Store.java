package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import java.time.Duration;
import java.util.List;

/**
 * A small key-value store that the processes of one job share to find each other: the Ferry
 * equivalent of PyTorch's c10d {@code Store}. Keys are strings, values are byte arrays.
 *
 * <p>Implementations: {@link TcpStore} (one process hosts a server, every process is a client),
 * {@link FileStore} (a file on a shared file system) and {@link PrefixStore} (a namespace inside
 * another store); the optional modules {@code ferry-store-etcd} and {@code ferry-store-zookeeper}
 * add stores on a service the cluster already runs, found through {@link
 * dev.ferry.rpc.spi.StoreProvider}. {@link Rendezvous} builds the right one from an init method URL.
 *
 * <pre>{@code
 * try (TcpStore store = TcpStore.create(TcpStoreOptions.builder()
 *         .host("127.0.0.1").port(29500).server(rank == 0).build())) {
 *     store.set("addr/" + rank, myAddress.getBytes(UTF_8));
 *     long arrived = store.add("arrived", 1);
 *     byte[] peer = store.get("addr/0");          // blocks until rank 0 published it
 *     store.waitFor(List.of("addr/0", "addr/1")); // blocks until both exist
 * }
 * }</pre>
 *
 * <h2>Timeouts</h2>
 * Every store has a default {@link #timeout()} used by {@link #get(String)} and {@link
 * #waitFor(List)}; the overloads taking a {@link Duration} override it for one call. {@link
 * Duration#ZERO} means "wait forever" (until the key appears or the store is closed). A wait that
 * runs out throws a {@link StoreTimeoutException} (code {@link RpcException.Code#TIMEOUT}) whose
 * {@link StoreTimeoutException#missingKeys()} lists the keys that were still absent.
 *
 * <h2>Counters</h2>
 * {@link #add} keeps its counter as decimal ASCII text (as c10d does), so {@code get} of a counter
 * returns e.g. the bytes of {@code "42"}, and {@code add} on a key holding anything but a decimal
 * integer fails with {@link RpcException.Code#INVALID_ARGUMENT}.
 *
 * <h2>Sessions</h2>
 * Stores on a service with client sessions (etcd leases, ZooKeeper sessions) report {@link
 * #hasSessions()} and offer {@link #setEphemeral}: a key that goes away by itself when the process
 * that set it closes its store or dies. Worker registrations use it, so a dead worker's entry does
 * not outlive it.
 *
 * <h2>Lifetime</h2>
 * {@link #close()} releases the store's resources. After it, every operation fails with {@link
 * RpcException.Code#SHUTDOWN}, and calls blocked in {@code get} or {@code waitFor} are woken with
 * that error. Views made by {@link #withTimeout} or {@link PrefixStore} share the lifetime of the
 * store they wrap: closing a view closes the underlying store too, so close only the store you
 * created and simply drop views you no longer need.
 *
 * <p>Implementations are thread-safe: any number of threads may use one store at once, and a
 * thread blocked in {@code get} does not stop other threads from setting the key it waits for.
 */
public interface Store extends AutoCloseable {

    /** Stores {@code value} under {@code key}, replacing any previous value. */
    void set(String key, byte[] value);

    /**
     * Stores {@code value} under {@code key} for as long as this store's session lasts: the key is
     * deleted when this store is closed or, if the process dies without closing it, once the
     * service sees its session expire (the etcd lease's time to live, the ZooKeeper session
     * timeout). Setting the key again, ephemeral or not, replaces it.
     *
     * @throws RpcException INVALID_ARGUMENT if this store has no sessions ({@link #hasSessions()}
     *     is false: {@link TcpStore}, {@link FileStore})
     */
    default void setEphemeral(String key, byte[] value) {
        throw new RpcException(RpcException.Code.INVALID_ARGUMENT, this + " has no client sessions, so it cannot"
                + " hold ephemeral keys; use an etcd:// or zookeeper:// store");
    }

    /** Whether this store has client sessions, so {@link #setEphemeral} works. */
    default boolean hasSessions() {
        return false;
    }

    /**
     * The value of {@code key}, waiting up to {@link #timeout()} for the key to be set.
     *
     * @throws StoreTimeoutException if the key does not appear in time
     */
    default byte[] get(String key) {
        return get(key, timeout());
    }

    /**
     * The value of {@code key}, waiting up to {@code timeout} ({@link Duration#ZERO}: forever) for
     * the key to be set.
     *
     * @throws StoreTimeoutException if the key does not appear in time
     */
    byte[] get(String key, Duration timeout);

    /**
     * Atomically adds {@code delta} to the counter at {@code key}, creating it at 0 first if the key
     * is absent, and returns the new value. Use {@code add(key, 0)} to read a counter.
     *
     * @throws RpcException with code INVALID_ARGUMENT if the key holds something other than a
     *     decimal integer, or the sum overflows a {@code long}
     */
    long add(String key, long delta);

    /**
     * Atomically replaces the value of {@code key} with {@code desired} if it currently equals
     * {@code expected}, or if the key is absent and {@code expected} is empty; returns the value held
     * afterwards, so the swap happened exactly when the result equals {@code desired}.
     *
     * <p>As in c10d, when the key is absent and {@code expected} is <em>not</em> empty nothing is
     * stored and {@code expected} is returned (there is no stored value to return).
     */
    byte[] compareSet(String key, byte[] expected, byte[] desired);

    /**
     * Blocks until every key in {@code keys} exists, for at most {@link #timeout()}.
     *
     * @throws StoreTimeoutException naming the keys still missing when the time runs out
     */
    default void waitFor(List<String> keys) {
        waitFor(keys, timeout());
    }

    /**
     * Blocks until every key in {@code keys} exists, for at most {@code timeout} ({@link
     * Duration#ZERO}: forever).
     *
     * @throws StoreTimeoutException naming the keys still missing when the time runs out
     */
    void waitFor(List<String> keys, Duration timeout);

    /** Whether every key in {@code keys} exists right now; never blocks on a missing key. */
    boolean check(List<String> keys);

    /** Removes {@code key}; returns whether it existed. */
    boolean deleteKey(String key);

    /**
     * The number of keys in the store. For a {@link PrefixStore} this counts the keys of the whole
     * underlying store, as c10d does, not only those under the prefix.
     */
    long numKeys();

    /** The default timeout of {@link #get(String)} and {@link #waitFor(List)}; ZERO means forever. */
    Duration timeout();

    /**
     * A view of this store whose default timeout is {@code timeout} (ZERO: forever). The view shares
     * this store's connection or file and its lifetime; this store's own timeout is unchanged.
     */
    Store withTimeout(Duration timeout);

    /**
     * Closes the store: blocked calls are woken with {@link RpcException.Code#SHUTDOWN} and later
     * calls fail with it. Idempotent.
     */
    @Override
    void close();
}
