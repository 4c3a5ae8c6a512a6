package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.SharedBuffers;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.HashMap;
import java.util.Map;

/**
 * This worker's shared-memory segment: a file in a memory file system ({@code /dev/shm}), mode
 * 0600, sparse (it costs memory only where used), mapped once, that same-host peers map too. Large
 * out-of-band buffers sent to them are copied into ranges of it, which stay lent to the connection
 * until the peer releases them (it does when the application no longer references its view).
 *
 * <pre>
 * offset 0:            int64 token (random; a peer checks it to know it mapped the file meant)
 * offset HEADER_BYTES: ranges, lent first fit in GRANULE units
 * </pre>
 *
 * <h2>Ranges lent on a connection that closed</h2>
 * The peer may still read such a range after the connection closed: its application keeps the
 * views it received as long as it likes, and they stay valid (they map our file, not the
 * connection). So a range is never reused just because its connection closed. Instead it is
 * <em>orphaned</em>: tagged with the peer ({@link PeerProcess}, its segment token and process)
 * instead of the connection, and it comes back in one of two ways, each safe:
 * <ul>
 *   <li>the peer releases it, as it releases any range, once its view is unreachable: over
 *       another connection to us, or over the next one it opens (it keeps releases it could not
 *       send, {@link SharedMemory#releaseLater}); a release from a connection of the same peer
 *       (same token) is accepted for an orphaned range;</li>
 *   <li>the peer's process has ended ({@link #reclaimGone}, checked when the segment is full): a
 *       process that no longer exists reads nothing.</li>
 * </ul>
 * A peer transport that closed while its process lives on keeps its orphans until that process
 * ends: its application may still hold views, and nobody is left to release them. Under
 * connection churn with a live peer the ranges do come back, so the segment does not run full.
 *
 * <p>The file is unlinked right after it is mapped, so nothing is left behind even when the process
 * is killed: peers open it through this process's descriptor ({@code /proc/<pid>/fd/<n>}, kept open
 * until {@link #close}), and its memory goes with the last mapping. Where that path cannot be found
 * the file stays until {@link #close} (or JVM exit).
 *
 * <p>Thread-safe.
 */
final class SharedSegment {
    /** Ranges are lent in whole units of this. */
    static final int GRANULE = 64 << 10;
    /** The header before the first range. */
    static final int HEADER_BYTES = GRANULE;
    /** Largest segment (a mapped buffer is indexed by int). */
    static final long MAX_BYTES = (long) Integer.MAX_VALUE - GRANULE + 1;

    private final Path path;
    /** What peers open: {@code /proc/<pid>/fd/<fd>} once the file is unlinked, else its path. */
    private final String announced;
    /** Kept open while the segment lives: peers open the unlinked file through it. */
    private final FileChannel file;
    private final UserPrincipal owner;
    private final MappedByteBuffer memory;
    private final long token;
    // Under this.
    private final FreeRanges free;
    private final Map<Integer, Lease> lent = new HashMap<>();
    private long lentBytes;
    /** Bytes lent on connections that closed and not back yet. */
    private long orphanedBytes;
    /** End of the part of the segment ever lent: pages past it were never touched (fresh memory). */
    private int touched = HEADER_BYTES;

    private SharedSegment(Path path, String announced, FileChannel file, UserPrincipal owner, MappedByteBuffer memory,
                          long token) {
        this.path = path;
        this.announced = announced;
        this.file = file;
        this.owner = owner;
        this.memory = memory;
        this.token = token;
        this.free = new FreeRanges(HEADER_BYTES, memory.capacity());
    }

    /** Creates and maps a segment of {@code dataBytes} (rounded to granules) in {@code dir}. */
    static SharedSegment create(Path dir, long dataBytes) throws IOException {
        long data = Math.min((dataBytes + GRANULE - 1) / GRANULE * GRANULE, MAX_BYTES - HEADER_BYTES);
        long size = HEADER_BYTES + data;
        // Not a secret (the file is the user's own): the name must not collide, the token tell files apart.
        java.util.random.RandomGenerator random = java.util.concurrent.ThreadLocalRandom.current();
        Path path = dir.resolve("ferry-" + ProcessHandle.current().pid() + "-"
                + Long.toHexString(random.nextLong() & Long.MAX_VALUE) + ".shm");
        Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        FileChannel file = null;
        try {
            file = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            // Sized by writing its last byte: the file stays sparse, pages come as ranges are used.
            file.write(ByteBuffer.wrap(new byte[1]), size - 1);
            MappedByteBuffer memory = file.map(FileChannel.MapMode.READ_WRITE, 0, size);
            long token = random.nextLong();
            memory.putLong(0, token);
            UserPrincipal owner = Files.getOwner(path, LinkOption.NOFOLLOW_LINKS);
            String announced = openDescriptorPath(path);
            if (announced != null) {
                // Nothing to leave behind, even if this process is killed: peers open it through our
                // descriptor, and the memory goes with the last mapping.
                Files.delete(path);
            } else {
                announced = path.toString();
                path.toFile().deleteOnExit();
            }
            return new SharedSegment(path, announced, file, owner, memory, token);
        } catch (IOException | RuntimeException e) {
            if (file != null) {
                file.close();
            }
            Files.deleteIfExists(path);
            throw e;
        }
    }

    /** {@code /proc/<pid>/fd/<n>} for this process's open descriptor of {@code path}, or null. */
    private static String openDescriptorPath(Path path) {
        Path fds = Path.of("/proc/self/fd");
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(fds)) {
            for (Path entry : entries) {
                try {
                    if (Files.readSymbolicLink(entry).equals(path)) {
                        return "/proc/" + ProcessHandle.current().pid() + "/fd/" + entry.getFileName();
                    }
                } catch (IOException | UnsupportedOperationException e) {
                    // a descriptor closed meanwhile, or not a link: not ours
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
        return null;
    }

    /** What peers open to map this segment. */
    String announced() {
        return announced;
    }

    /** The user owning the segment (a peer's must be the same). */
    UserPrincipal owner() {
        return owner;
    }

    Path path() {
        return path;
    }

    long token() {
        return token;
    }

    /** Bytes of the file, header included. */
    long size() {
        return memory.capacity();
    }

    /** A lent range, and whether it reaches into memory never used before (fresh pages cost a fault each). */
    record Taken(SharedBuffers.Range range, boolean fresh, long lentBefore) {
    }

    /** Lends a range of {@code length} bytes to {@code owner} (a connection); null if none is free. */
    synchronized Taken take(int length, Object owner) {
        int units = (int) (((long) length + GRANULE - 1) / GRANULE);
        long rangeLength = (long) units * GRANULE;
        int offset = free.take((int) rangeLength);
        if (offset < 0) {
            return null;
        }
        lent.put(offset, new Lease((int) rangeLength, owner));
        long before = lentBytes;
        lentBytes += rangeLength;
        boolean fresh = offset + rangeLength > touched;
        touched = (int) Math.max(touched, offset + rangeLength);
        return new Taken(new SharedBuffers.Range(offset, memory.slice(offset, length)), fresh, before);
    }

    /**
     * Gives back the range at {@code offset} if it is lent to {@code owner}; false (and nothing
     * changes) otherwise.
     */
    synchronized boolean release(long offset, Object owner) {
        return releaseOrWhyNot(offset, owner, null) == null;
    }

    /**
     * As {@link #release}, and also a range orphaned by a closed connection of {@code peer} (the
     * peer on {@code owner}'s connection, or null); null when released, else why not (for the error
     * message).
     */
    synchronized String releaseOrWhyNot(long offset, Object owner, PeerProcess peer) {
        if (offset < HEADER_BYTES || offset >= memory.capacity()) {
            return "outside the segment";
        }
        Lease lease = lent.get((int) offset);
        if (lease == null) {
            return "not lent";
        }
        if (lease.owner != owner) {
            // Another connection of the same peer may release it: the peer sends a release on the
            // connection it has when the one the range came on closed (maybe before we saw that).
            PeerProcess lentTo = lease.owner instanceof PeerProcess orphanOf ? orphanOf
                    : lease.owner instanceof Borrower borrower ? borrower.peer() : null;
            if (peer == null || lentTo == null || lentTo.token() != peer.token()) {
                return lease.owner instanceof PeerProcess || lease.owner == STRANDED
                        ? "lent to another peer on a closed connection" : "lent on another connection";
            }
        }
        free(offset, lease);
        return null;
    }

    private void free(long offset, Lease lease) {
        lent.remove((int) offset);
        lentBytes -= lease.length;
        if (lease.owner instanceof PeerProcess) {
            orphanedBytes -= lease.length;
        }
        free.release((int) offset, lease.length);
    }

    /**
     * {@code owner}'s connection closed: its ranges stay lent, now to {@code peer} (see the class
     * comment); with no peer known, for good.
     */
    synchronized void orphan(Object owner, PeerProcess peer) {
        for (Lease lease : lent.values()) {
            if (lease.owner == owner) {
                lease.owner = peer != null ? peer : STRANDED;
                orphanedBytes += lease.length;
            }
        }
    }

    /**
     * Frees the orphaned ranges of peers whose process has ended; returns the bytes freed. Looks
     * each peer up once (a process lookup costs a system call or two).
     */
    synchronized long reclaimGone() {
        Map<PeerProcess, Boolean> gone = new HashMap<>();
        long freed = 0;
        for (var it = lent.entrySet().iterator(); it.hasNext(); ) {
            var entry = it.next();
            Lease lease = entry.getValue();
            if (lease.owner instanceof PeerProcess peer && gone.computeIfAbsent(peer, PeerProcess::isGone)) {
                it.remove();
                lentBytes -= lease.length;
                orphanedBytes -= lease.length;
                free.release(entry.getKey(), lease.length);
                freed += lease.length;
            }
        }
        return freed;
    }

    synchronized long lentBytes() {
        return lentBytes;
    }

    /** Bytes lent on connections that closed, not back yet. */
    synchronized long orphanedBytes() {
        return orphanedBytes;
    }

    /** Deletes the file (if not done at once); the mapping goes when the garbage collector drops it. */
    void close() throws IOException {
        try {
            file.close();
        } finally {
            Files.deleteIfExists(path);
        }
    }

    /** An owner of ranges that knows its peer: another connection of that peer may release them. */
    interface Borrower {
        /** The peer, or null while unknown. */
        PeerProcess peer();
    }

    /** The owner of a range lent on a closed connection to a peer we know nothing of: never back. */
    private static final Object STRANDED = new Object();

    private static final class Lease {
        final int length;
        Object owner;

        Lease(int length, Object owner) {
            this.length = length;
            this.owner = owner;
        }
    }
}
