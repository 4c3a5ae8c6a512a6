package dev.ferry.rpc.internal.transport;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * A same-host peer's {@link SharedSegment}, mapped here so that what it sends through it is read in
 * place. Mapped only when every check passes: the file is a regular file (not a link) named like a
 * segment, in this worker's own segment directory, owned by this worker's user with no access for
 * others, exactly as large as announced, and begins with the announced token. Thread-safe.
 */
final class PeerSegment {
    private static final Pattern NAME = Pattern.compile("ferry-[0-9]+-[0-9a-f]+\\.shm");
    /** A peer's open descriptor of its (unlinked) segment. */
    private static final Pattern DESCRIPTOR = Pattern.compile("/proc/[0-9]+/fd/[0-9]+");

    private final Path path;
    private final MappedByteBuffer memory;
    /** Bytes of views handed out and not yet known to be unreachable. */
    final AtomicLong outstanding = new AtomicLong();
    /** Open connections using this mapping. */
    final java.util.concurrent.atomic.AtomicInteger links = new java.util.concurrent.atomic.AtomicInteger();

    private PeerSegment(Path path, MappedByteBuffer memory) {
        this.path = path;
        this.memory = memory;
    }

    /** Maps a peer's segment after checking it (see the class comment); throws with the reason otherwise. */
    static PeerSegment map(String announced, long size, long token, SharedSegment own) throws IOException {
        Path path = Path.of(announced).normalize();
        Path dir = own.path().getParent();
        // Either the peer's descriptor (a link the kernel resolves to the unlinked file) or a file
        // named like a segment in this worker's own segment directory; never a link otherwise.
        boolean descriptor = DESCRIPTOR.matcher(announced).matches();
        if (!descriptor && (!path.isAbsolute() || !dir.equals(path.getParent())
                || !NAME.matcher(path.getFileName().toString()).matches())) {
            throw new IOException("not a segment in " + dir + ": " + announced);
        }
        if (size <= SharedSegment.HEADER_BYTES || size > SharedSegment.MAX_BYTES) {
            throw new IOException("bad segment size " + size);
        }
        LinkOption[] links = descriptor ? new LinkOption[0] : new LinkOption[] {LinkOption.NOFOLLOW_LINKS};
        PosixFileAttributes attributes = Files.readAttributes(path, PosixFileAttributes.class, links);
        if (!attributes.isRegularFile() || attributes.size() != size) {
            throw new IOException(announced + " is not a regular file of " + size + " bytes");
        }
        if (!attributes.owner().equals(own.owner())
                || !EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE)
                .containsAll(attributes.permissions())) {
            throw new IOException(announced + " belongs to another user or others may access it");
        }
        MappedByteBuffer memory;
        java.util.Set<java.nio.file.OpenOption> options = new java.util.HashSet<>(
                java.util.List.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
        options.addAll(java.util.List.of(links));
        try (FileChannel file = FileChannel.open(path, options)) {
            if (file.size() != size) {
                throw new IOException(announced + " is not " + size + " bytes");
            }
            memory = file.map(FileChannel.MapMode.READ_WRITE, 0, size);
        }
        if (memory.getLong(0) != token) {
            throw new IOException(announced + " does not hold the announced token");
        }
        return new PeerSegment(path, memory);
    }

    Path path() {
        return path;
    }

    long size() {
        return memory.capacity();
    }

    MappedByteBuffer memory() {
        return memory;
    }
}
