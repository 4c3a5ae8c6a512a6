package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.internal.store.Deadline;
import dev.ferry.rpc.internal.store.StoreArguments;
import dev.ferry.rpc.internal.store.StoreSemantics;
import dev.ferry.rpc.store.Store;
import dev.ferry.rpc.store.StoreTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@link Store} contract on top of a {@link StoreBackend}: argument checks, timeouts, blocking
 * waits, counters and compare-and-set (by optimistic retry on the backend's versions, with the same
 * value rules as the TCP and file stores), and the closed state. A store plug-in (etcd,
 * ZooKeeper) writes a backend and hands it here, so every external store behaves exactly alike.
 *
 * <pre>{@code
 * Store store = new BackedStore(new MyServiceBackend(client, "/jobs/42"), Duration.ofMinutes(5));
 * }</pre>
 *
 * <p>Views made by {@link #withTimeout} share the backend and its lifetime. This class is
 * thread-safe.
 */
public final class BackedStore implements Store {
    private final Shared shared;
    private final Duration timeout;

    /** The backend and the state every view of one store shares. */
    private static final class Shared {
        final StoreBackend backend;
        final Set<CompletableFuture<byte[]>> waits = ConcurrentHashMap.newKeySet();
        volatile boolean closed;

        Shared(StoreBackend backend) {
            this.backend = backend;
        }
    }

    /**
     * @param backend the service's primitives; closed with this store
     * @param timeout the default timeout of {@code get} and {@code waitFor} (ZERO: forever)
     */
    public BackedStore(StoreBackend backend, Duration timeout) {
        this(new Shared(Objects.requireNonNull(backend, "backend")), StoreArguments.timeout(timeout));
    }

    private BackedStore(Shared shared, Duration timeout) {
        this.shared = shared;
        this.timeout = timeout;
    }

    private StoreBackend backend() {
        if (shared.closed) {
            throw closed();
        }
        return shared.backend;
    }

    private RpcException closed() {
        return new RpcException(Code.SHUTDOWN, this + " is closed");
    }

    @Override
    public void set(String key, byte[] value) {
        backend().write(StoreArguments.key(key), StoreArguments.value(value, "value"));
    }

    @Override
    public void setEphemeral(String key, byte[] value) {
        backend().writeEphemeral(StoreArguments.key(key), StoreArguments.value(value, "value"));
    }

    @Override
    public boolean hasSessions() {
        return true;
    }

    @Override
    public byte[] get(String key, Duration timeout) {
        StoreArguments.key(key);
        StoreArguments.timeout(timeout);
        byte[] value = awaitAll(List.of(key), timeout).get(0);
        if (value == null) {
            throw new StoreTimeoutException(timeout, List.of(key));
        }
        return value;
    }

    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        List<String> wanted = StoreArguments.keys(keys);
        StoreArguments.timeout(timeout);
        List<byte[]> values = awaitAll(wanted, timeout);
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < wanted.size(); i++) {
            if (values.get(i) == null) {
                missing.add(wanted.get(i));
            }
        }
        if (!missing.isEmpty()) {
            throw new StoreTimeoutException(timeout, missing);
        }
    }

    /**
     * Waits until every key exists or the time is up; returns each key's value as it first
     * appeared, null for the keys still missing.
     */
    private List<byte[]> awaitAll(List<String> keys, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        List<CompletableFuture<byte[]>> watches = new ArrayList<>(keys.size());
        try {
            for (String key : keys) {
                CompletableFuture<byte[]> watch = backend().whenPresent(key);
                shared.waits.add(watch);
                watches.add(watch);
            }
            if (shared.closed) { // close() may have run before the watches were registered
                throw closed();
            }
            List<byte[]> values = new ArrayList<>(keys.size());
            for (CompletableFuture<byte[]> watch : watches) {
                values.add(await(watch, deadline));
            }
            return values;
        } finally {
            for (CompletableFuture<byte[]> watch : watches) {
                shared.waits.remove(watch);
                watch.cancel(false);
            }
        }
    }

    /** The watch's value, or null if the deadline came first; rethrows its failure. */
    private byte[] await(CompletableFuture<byte[]> watch, Deadline deadline) {
        try {
            return deadline.isForever() ? watch.get() : watch.get(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (CancellationException e) {
            throw closed();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RpcException rpc) {
                throw rpc;
            }
            throw new RpcException(Code.UNAVAILABLE, this + " failed while waiting: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while waiting for " + this, e);
        }
    }

    @Override
    public long add(String key, long delta) {
        StoreArguments.key(key);
        while (true) {
            StoreBackend.Versioned current = backend().read(key);
            long sum = StoreSemantics.add(key, current == null ? null : current.value(), delta);
            if (backend().replace(key, current, StoreSemantics.encodeCounter(sum))) {
                return sum;
            }
        }
    }

    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        StoreArguments.key(key);
        StoreArguments.value(expected, "expected");
        StoreArguments.value(desired, "desired");
        while (true) {
            StoreBackend.Versioned current = backend().read(key);
            StoreSemantics.CompareSetOutcome outcome =
                    StoreSemantics.compareSet(current == null ? null : current.value(), expected, desired);
            if (outcome.toStore() == null || backend().replace(key, current, outcome.toStore())) {
                return outcome.result();
            }
        }
    }

    @Override
    public boolean check(List<String> keys) {
        for (String key : StoreArguments.keys(keys)) {
            if (backend().read(key) == null) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean deleteKey(String key) {
        return backend().delete(StoreArguments.key(key));
    }

    @Override
    public long numKeys() {
        return backend().count();
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    @Override
    public Store withTimeout(Duration timeout) {
        return new BackedStore(shared, StoreArguments.timeout(timeout));
    }

    @Override
    public void close() {
        if (shared.closed) {
            return;
        }
        shared.closed = true;
        for (CompletableFuture<byte[]> watch : shared.waits) {
            watch.completeExceptionally(closed());
        }
        shared.backend.close();
    }

    @Override
    public String toString() {
        return shared.backend.toString();
    }
}
