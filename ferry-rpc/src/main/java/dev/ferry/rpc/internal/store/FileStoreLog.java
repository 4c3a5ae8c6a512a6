package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One open store file: the append-only {@linkplain FileStoreRecords log} plus this process's
 * replayed copy of it. Every operation runs in {@link #locked}, which takes the JVM-wide stripe
 * lock, then the OS file lock, then reads any records other processes appended since last time.
 *
 * <p>Lock acquisition polls {@link FileChannel#tryLock()} with backoff rather than blocking in
 * {@link FileChannel#lock()}, so that it respects deadlines and {@link #close()}: a process that
 * died holding the lock must not hang its peers forever.
 *
 * <p>This class is thread-safe.
 */
public final class FileStoreLog implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FileStoreLog.class);
    private static final long MAX_LOCK_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** What runs with the file locked and the map up to date. */
    @FunctionalInterface
    public interface Action<T> {
        T run(FileStoreLog log) throws IOException;
    }

    private final Path path;
    private final FileChannel channel;
    private final FileLockStripes.Stripe stripe;
    // Guarded by stripe.lock.
    private final Map<String, byte[]> entries = new HashMap<>();
    private long readPosition;
    private volatile boolean closed;

    private FileStoreLog(Path path, FileChannel channel, Object fileKey) {
        this.path = path;
        this.channel = channel;
        this.stripe = FileLockStripes.forFile(fileKey);
    }

    /**
     * Opens (creating if needed) the store file at {@code path}.
     *
     * @throws RpcException INVALID_ARGUMENT if the file cannot be opened, e.g. its directory is missing
     */
    public static FileStoreLog open(Path path) {
        try {
            FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            Object fileKey = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
            return new FileStoreLog(path, channel, fileKey != null ? fileKey : path.toRealPath());
        } catch (NoSuchFileException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Cannot open FileStore file " + path
                    + ": its directory does not exist", e);
        } catch (IOException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "Cannot open FileStore file " + path + ": " + e, e);
        }
    }

    public Path path() {
        return path;
    }

    /**
     * Runs {@code action} with this JVM's stripe lock and the OS file lock held and the map
     * refreshed from the file.
     *
     * <p>The work runs on a fresh virtual thread while the caller waits. A {@link FileChannel} is
     * closed for every user when a thread doing I/O on it is interrupted, so an interrupt aimed at
     * one caller must never reach the thread touching the channel. An interrupted caller stops
     * waiting (INTERNAL), but an operation already started still completes.
     *
     * @param lockTimeout how long to wait for the locks (ZERO: forever)
     * @throws RpcException SHUTDOWN if closed, TIMEOUT if the locks are not acquired in time
     */
    public <T> T locked(Duration lockTimeout, Action<T> action) {
        if (Thread.currentThread().isInterrupted()) {
            throw interrupted(null);
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread.ofVirtual().name("ferry-filestore-io").start(() -> {
            try {
                result.complete(lockedHere(lockTimeout, action));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        try {
            // Bounded by lockTimeout (and by close()) inside lockedHere.
            return result.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RpcException rpc) {
                throw rpc.rethrowable();
            }
            throw new RpcException(Code.INTERNAL, "FileStore operation on " + path + " failed: " + e.getCause(),
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw interrupted(e);
        }
    }

    private RpcException interrupted(InterruptedException cause) {
        return new RpcException(Code.INTERNAL, "Interrupted while using FileStore file " + path
                + (cause == null ? "" : "; an operation already started may still complete"), cause);
    }

    private <T> T lockedHere(Duration lockTimeout, Action<T> action) {
        Deadline deadline = Deadline.after(lockTimeout);
        lockStripe(deadline, lockTimeout);
        try {
            FileLock fileLock = lockFile(deadline, lockTimeout);
            try {
                refresh();
                return action.run(this);
            } finally {
                fileLock.release();
            }
        } catch (ClosedChannelException e) {
            throw closedError();
        } catch (IOException e) {
            throw new RpcException(Code.INTERNAL, "I/O error on FileStore file " + path + ": " + e, e);
        } finally {
            stripe.lock.unlock();
        }
    }

    private void lockStripe(Deadline deadline, Duration lockTimeout) {
        try {
            if (deadline.isForever()) {
                stripe.lock.lockInterruptibly();
            } else if (!stripe.lock.tryLock(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                throw lockTimeout(lockTimeout, "another FileStore in this JVM");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while locking FileStore file " + path, e);
        }
        if (closed) {
            stripe.lock.unlock();
            throw closedError();
        }
    }

    private FileLock lockFile(Deadline deadline, Duration lockTimeout) throws IOException {
        long backoffNanos = TimeUnit.MICROSECONDS.toNanos(100);
        while (true) {
            if (closed) {
                throw closedError();
            }
            try {
                FileLock lock = channel.tryLock();
                if (lock != null) {
                    return lock;
                }
            } catch (OverlappingFileLockException e) {
                // Someone in this JVM locked the file without going through our stripes (another
                // library, or a hard link to the same file): wait for them like for another process.
                log.debug("FileStore file {} is locked elsewhere in this JVM; retrying", path);
            }
            if (deadline.expired()) {
                throw lockTimeout(lockTimeout, "another process");
            }
            LockSupport.parkNanos(Math.min(backoffNanos, deadline.remainingNanos()));
            backoffNanos = Math.min(backoffNanos * 2, MAX_LOCK_BACKOFF_NANOS);
        }
    }

    private RpcException lockTimeout(Duration timeout, String holder) {
        return new RpcException(Code.TIMEOUT, "Timed out after " + timeout.toMillis()
                + " ms waiting for the lock on FileStore file " + path + " (held by " + holder + ")");
    }

    private RpcException closedError() {
        return new RpcException(Code.SHUTDOWN, "FileStore on " + path + " is closed");
    }

    /** Reads records appended since the last refresh. Called with the file locked. */
    private void refresh() throws IOException {
        long size = channel.size();
        if (size < readPosition) {
            throw corrupt(size, "the file shrank from " + readPosition + " bytes; was it truncated or replaced?");
        }
        if (size == 0) {
            // The first store to lock a new file writes its header.
            writeAt(ByteBuffer.wrap(FileStoreRecords.HEADER), 0);
            readPosition = FileStoreRecords.HEADER.length;
            return;
        }
        if (readPosition == 0) {
            ByteBuffer header = readAt(0, (int) Math.min(size, FileStoreRecords.HEADER.length));
            if (!FileStoreRecords.isHeader(header.array())) {
                throw corrupt(0, "not a Ferry FileStore file (bad header)");
            }
            readPosition = FileStoreRecords.HEADER.length;
        }
        if (size == readPosition) {
            return;
        }
        long unread = size - readPosition;
        if (unread > Integer.MAX_VALUE - 16) {
            throw corrupt(readPosition, unread + " unread bytes is more than a store can hold");
        }
        ByteBuffer tail = readAt(readPosition, (int) unread);
        int consumed;
        try {
            consumed = FileStoreRecords.replay(tail, entries);
        } catch (IllegalArgumentException e) {
            throw corrupt(readPosition + tail.position(), e.getMessage());
        }
        if (consumed != unread) {
            // We hold the lock, so no writer is mid-append: a partial record means one crashed.
            throw corrupt(readPosition + consumed, "the log ends in the middle of a record");
        }
        readPosition = size;
    }

    private RpcException corrupt(long offset, String why) {
        return new RpcException(Code.PROTOCOL_ERROR, "FileStore file " + path + " is corrupt at offset "
                + offset + ": " + why);
    }

    private ByteBuffer readAt(long position, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw corrupt(position + buffer.position(), "unexpected end of file");
            }
        }
        return buffer.flip();
    }

    private void writeAt(ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer, position + buffer.position());
        }
    }

    // ---- operations for Action bodies; the file is locked and `entries` is current ----

    /** The value of {@code key}, or null. */
    public byte[] get(String key) {
        return entries.get(key);
    }

    public boolean contains(String key) {
        return entries.containsKey(key);
    }

    public int size() {
        return entries.size();
    }

    /** Appends a SET record and applies it. */
    public void put(String key, byte[] value) throws IOException {
        append(FileStoreRecords.set(key, value));
        entries.put(key, value);
    }

    /** Appends a DELETE record (if the key exists) and applies it; returns whether it existed. */
    public boolean remove(String key) throws IOException {
        if (!entries.containsKey(key)) {
            return false;
        }
        append(FileStoreRecords.delete(key));
        entries.remove(key);
        return true;
    }

    private void append(byte[] record) throws IOException {
        writeAt(ByteBuffer.wrap(record), readPosition);
        readPosition += record.length;
        stripe.changed.signalAll();
    }

    /**
     * Waits up to {@code nanos} for a change made through any FileStore of this JVM on a file of
     * the same stripe, or for {@link #close()}. Changes by other processes are only seen by polling,
     * which is why callers bound {@code nanos}.
     */
    public void awaitChange(long nanos) {
        stripe.lock.lock();
        try {
            if (!closed) {
                stripe.changed.awaitNanos(nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while waiting on FileStore file " + path, e);
        } finally {
            stripe.lock.unlock();
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** Closes the file; blocked waiters wake and see SHUTDOWN. Idempotent. */
    @Override
    public void close() {
        closed = true;
        // Taking the stripe lock both waits out any operation in progress and lets us signal waiters.
        stripe.lock.lock();
        try {
            stripe.changed.signalAll();
            channel.close();
        } catch (IOException e) {
            log.debug("Closing FileStore file {}: {}", path, e.toString());
        } finally {
            stripe.lock.unlock();
        }
    }
}
