package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.store.Deadline;
import dev.ferry.rpc.internal.store.FileStoreLog;
import dev.ferry.rpc.internal.store.StoreArguments;
import dev.ferry.rpc.internal.store.StoreSemantics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Store} kept in a file that several processes open at once, typically on a shared file
 * system: the Ferry equivalent of c10d's {@code FileStore}, and what {@code file://} init methods
 * use. There is no server; every process appends operations to the file under an OS file lock and
 * replays what the others appended.
 *
 * <pre>{@code
 * try (FileStore store = FileStore.open(Path.of("/shared/job-42/store"), Duration.ofSeconds(60))) {
 *     store.set("rank/" + rank, address);
 *     store.waitFor(List.of("rank/0", "rank/1"));
 * }
 * }</pre>
 *
 * <p>With no server to park on, blocking calls poll the file, backing off from 1 ms to 50 ms; a
 * change made by another FileStore in the same JVM wakes them at once.
 *
 * <p>The file is a log that only grows. Opened with a number of workers (as {@code file://}
 * rendezvous does, with the world size), the file is deleted when that many stores on it have been
 * closed, as c10d's {@code FileStore(path, numWorkers)} does: each close counts itself in the file
 * (key {@value #CLOSED_KEY}) and the last one removes it, so the next job on the same path starts
 * empty. Opened without, it is never deleted: use a fresh path per job, since keys left by an
 * earlier run would be seen by the next one. A file that is not a Ferry FileStore, or whose last
 * record was cut short by a crash, is reported as PROTOCOL_ERROR.
 *
 * <p>This class is thread-safe, and safe to use from several processes on one file.
 */
public final class FileStore implements Store {
    /** c10d's default store timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);
    private static final Logger log = LoggerFactory.getLogger(FileStore.class);
    private static final long MAX_POLL_MILLIS = 50;

    /** The counter of stores closed on this file, when it is opened for a number of workers. */
    public static final String CLOSED_KEY = "__ferry_filestore_closed__";

    private final FileStoreLog file;
    private final Duration timeout;
    /** Stores whose closes delete the file (0: never); shared with the views of this store. */
    private final int numWorkers;
    private final AtomicBoolean closed;

    private FileStore(FileStoreLog file, Duration timeout, int numWorkers, AtomicBoolean closed) {
        this.file = file;
        this.timeout = timeout;
        this.numWorkers = numWorkers;
        this.closed = closed;
    }

    /**
     * Opens the store file at {@code path} for {@code numWorkers} workers: once that many stores
     * on the file have been closed, the last close deletes it (see above).
     *
     * @throws RpcException INVALID_ARGUMENT if the file cannot be opened or created, or
     *                      {@code numWorkers} is below 1
     */
    public static FileStore open(Path path, Duration timeout, int numWorkers) {
        Objects.requireNonNull(path, "path");
        if (numWorkers < 1) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "numWorkers must be at least 1, got " + numWorkers);
        }
        return new FileStore(FileStoreLog.open(path), StoreArguments.timeout(timeout), numWorkers, new AtomicBoolean());
    }

    /**
     * Opens the store file at {@code path}, creating it if absent, with default timeout {@code
     * timeout} (ZERO: forever).
     *
     * @throws RpcException INVALID_ARGUMENT if the file cannot be opened or created
     */
    public static FileStore open(Path path, Duration timeout) {
        Objects.requireNonNull(path, "path");
        return new FileStore(FileStoreLog.open(path), StoreArguments.timeout(timeout), 0, new AtomicBoolean());
    }

    /** Opens the store file at {@code path} with {@link #DEFAULT_TIMEOUT}. */
    public static FileStore open(Path path) {
        return open(path, DEFAULT_TIMEOUT);
    }

    /** The store's file. */
    public Path path() {
        return file.path();
    }

    @Override
    public void set(String key, byte[] value) {
        String k = StoreArguments.key(key);
        byte[] v = StoreArguments.value(value, "value");
        file.locked(timeout, f -> {
            f.put(k, v);
            return null;
        });
    }

    @Override
    public byte[] get(String key, Duration timeout) {
        String k = StoreArguments.key(key);
        return poll(List.of(k), StoreArguments.timeout(timeout), f -> f.get(k));
    }

    @Override
    public long add(String key, long delta) {
        String k = StoreArguments.key(key);
        return file.locked(timeout, f -> {
            long updated = StoreSemantics.add(k, f.get(k), delta);
            f.put(k, StoreSemantics.encodeCounter(updated));
            return updated;
        });
    }

    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        String k = StoreArguments.key(key);
        byte[] e = StoreArguments.value(expected, "expected");
        byte[] d = StoreArguments.value(desired, "desired");
        return file.locked(timeout, f -> {
            StoreSemantics.CompareSetOutcome outcome = StoreSemantics.compareSet(f.get(k), e, d);
            if (outcome.toStore() != null) {
                f.put(k, outcome.toStore());
            }
            return outcome.result();
        });
    }

    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        List<String> ks = StoreArguments.keys(keys);
        poll(ks, StoreArguments.timeout(timeout), f -> Boolean.TRUE);
    }

    @Override
    public boolean check(List<String> keys) {
        List<String> ks = StoreArguments.keys(keys);
        return file.locked(timeout, f -> missing(f, ks).isEmpty());
    }

    @Override
    public boolean deleteKey(String key) {
        String k = StoreArguments.key(key);
        return file.locked(timeout, f -> f.remove(k));
    }

    @Override
    public long numKeys() {
        return file.locked(timeout, f -> (long) f.size());
    }

    @Override
    public Duration timeout() {
        return timeout;
    }

    @Override
    public FileStore withTimeout(Duration timeout) {
        return new FileStore(file, StoreArguments.timeout(timeout), numWorkers, closed);
    }

    /**
     * Closes the file; blocked calls on this store and its views fail with SHUTDOWN. Idempotent.
     * Opened for a number of workers, counts this store as closed first and deletes the file if it
     * is the last (failures to do so are logged; the file then stays, as without a count).
     */
    @Override
    public void close() {
        if (numWorkers > 0 && closed.compareAndSet(false, true)) {
            try {
                file.locked(timeout, f -> {
                    long closedStores = StoreSemantics.add(CLOSED_KEY, f.get(CLOSED_KEY), 1);
                    f.put(CLOSED_KEY, StoreSemantics.encodeCounter(closedStores));
                    if (closedStores >= numWorkers) {
                        Files.deleteIfExists(file.path());
                    }
                    return null;
                });
            } catch (RuntimeException e) {
                log.warn("cannot count the close of {} (the file stays): {}", file.path(), e.toString());
            }
        }
        file.close();
    }

    @Override
    public String toString() {
        return "FileStore[" + file.path() + "]";
    }

    /**
     * Re-reads the file until all {@code keys} exist, then returns {@code onReady} applied under the
     * same lock (so a single-key get cannot race with a delete).
     */
    private <T> T poll(List<String> keys, Duration timeout, FileStoreLog.Action<T> onReady) {
        Deadline deadline = Deadline.after(timeout);
        long backoffNanos = TimeUnit.MILLISECONDS.toNanos(1);
        List<String> lastMissing = keys;
        while (true) {
            Attempt<T> attempt;
            try {
                attempt = file.locked(timeout.isZero() ? Duration.ZERO : remaining(deadline), f -> {
                    List<String> missing = missing(f, keys);
                    return missing.isEmpty() ? new Attempt<>(onReady.run(f), missing) : new Attempt<T>(null, missing);
                });
            } catch (RpcException e) {
                if (e.code() != RpcException.Code.TIMEOUT) {
                    throw e;
                }
                // The file lock stayed busy until the deadline: still a timed-out wait for keys,
                // reported with the keys last seen missing so callers can name them.
                throw new StoreTimeoutException(timeout, lastMissing, e);
            }
            lastMissing = attempt.missing();
            if (attempt.missing().isEmpty()) {
                return attempt.value();
            }
            if (deadline.expired()) {
                throw new StoreTimeoutException(timeout, attempt.missing());
            }
            file.awaitChange(Math.min(backoffNanos, deadline.remainingNanos()));
            backoffNanos = Math.min(backoffNanos * 2, TimeUnit.MILLISECONDS.toNanos(MAX_POLL_MILLIS));
        }
    }

    private record Attempt<T>(T value, List<String> missing) {
    }

    private static Duration remaining(Deadline deadline) {
        // At least a millisecond: the last check after the deadline still gets to look at the file.
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), deadline.remainingNanos()));
    }

    private static List<String> missing(FileStoreLog f, List<String> keys) {
        List<String> missing = new ArrayList<>(0);
        for (String key : keys) {
            if (!f.contains(key)) {
                missing.add(key);
            }
        }
        return missing;
    }
}
