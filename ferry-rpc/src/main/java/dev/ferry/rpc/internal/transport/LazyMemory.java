package dev.ferry.rpc.internal.transport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Direct memory that the kernel commits page by page as it is first written: an anonymous
 * {@code mmap}, unmapped once the buffer is unreachable (an automatic arena's cleanup). The buffer
 * of a large frame, taken when its first chunk arrives, then costs what the peer has sent into it so
 * far, not the size it claimed, and it does not count against the JVM's direct-memory limit, so a
 * peer's claims cannot make another peer's next message fail to find memory. Touching it costs what
 * touching a fresh {@link ByteBuffer#allocateDirect} buffer costs (a page fault per page), without
 * the zeroing pass the JDK makes over the whole buffer first.
 *
 * <p>Off Linux, where the JVM refuses the native calls, or past the bound on what is mapped,
 * {@link ByteBuffer#allocateDirect}: committed at once. {@link #wouldMap} says beforehand which of
 * the two a buffer will be, so that the receiver of a large frame then takes its memory in steps
 * as the chunks arrive ({@link FrameAssembler}) rather than all of it on the claim.
 *
 * <p>Thread-safe; what is mapped at once is bounded (see {@link #MAPPED}).
 */
final class LazyMemory {
    private static final Logger log = LoggerFactory.getLogger(LazyMemory.class);
    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    /** What {@code mmap} returns when it fails. */
    private static final long MAP_FAILED = -1L;
    /**
     * Mapped bytes not yet unmapped, and their bound. Unmapping waits for the collector, and nothing
     * here makes it run (the JDK's direct buffers make it run when their limit is reached): past the
     * bound, buffers are {@code allocateDirect}'s again, whose limit (by default the heap's maximum,
     * as this bound is) brings the collector, which unmaps what is unreachable.
     */
    private static final AtomicLong MAPPED = new AtomicLong();
    private static final long MAPPED_LIMIT = Runtime.getRuntime().maxMemory();
    /** {@code mmap(addr, length, prot, flags, fd, offset)} and {@code munmap(addr, length)}, or null. */
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;

    static {
        MethodHandle[] calls = link();
        MMAP = calls == null ? null : calls[0];
        MUNMAP = calls == null ? null : calls[1];
    }

    private LazyMemory() {
    }

    /** Whether buffers are committed as they are written here (else they are {@code allocateDirect}'s). */
    static boolean isLazy() {
        return MMAP != null;
    }

    /** Bytes mapped and not unmapped yet (diagnostics and tests). */
    static long mappedBytes() {
        return MAPPED.get();
    }

    /**
     * Whether a buffer of {@code size} bytes taken now would be mapped, committed as it is written
     * (else {@link #allocate} makes an {@code allocateDirect} one, committed at once).
     */
    static boolean wouldMap(long size) {
        return MMAP != null && size > 0 && MAPPED.get() + size <= MAPPED_LIMIT;
    }

    /**
     * A direct buffer of {@code size} bytes, zero until written; its memory is committed as it is
     * written where {@link #wouldMap} (else at once).
     */
    static ByteBuffer allocate(int size) {
        if (!wouldMap(size)) {
            return ByteBuffer.allocateDirect(size);
        }
        try {
            return map(size);
        } catch (Throwable e) {
            log.debug("anonymous mapping of {} bytes failed, allocating: {}", size, e.toString());
            return ByteBuffer.allocateDirect(size);
        }
    }

    private static ByteBuffer map(long size) throws Throwable {
        MemorySegment mapped = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, size,
                PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
        if (mapped.address() == MAP_FAILED) {
            throw new IllegalStateException("mmap failed");
        }
        MAPPED.addAndGet(size);
        // Restricted: Ferry's JVM flags grant native access. The cleanup runs once the buffer (which
        // keeps the arena alive) is unreachable.
        return mapped.reinterpret(size, Arena.ofAuto(), LazyMemory::unmap).asByteBuffer();
    }

    private static void unmap(MemorySegment region) {
        MAPPED.addAndGet(-region.byteSize());
        try {
            int result = (int) MUNMAP.invokeExact(region, region.byteSize());
            if (result != 0) {
                log.warn("cannot unmap {} bytes of receive memory", region.byteSize());
            }
        } catch (Throwable e) {
            log.warn("cannot unmap {} bytes of receive memory: {}", region.byteSize(), e.toString());
        }
    }

    private static MethodHandle[] link() {
        if (!"Linux".equals(System.getProperty("os.name"))) {
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            Optional<MemorySegment> mmap = linker.defaultLookup().find("mmap");
            Optional<MemorySegment> munmap = linker.defaultLookup().find("munmap");
            if (mmap.isEmpty() || munmap.isEmpty()) {
                return null;
            }
            // Restricted: Ferry's JVM flags grant native access.
            MethodHandle[] calls = {
                    linker.downcallHandle(mmap.get(),
                            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG)),
                    linker.downcallHandle(munmap.get(), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG))};
            return calls;
        } catch (RuntimeException e) {
            log.debug("receive memory is allocated, not mapped (committed at once): {}", e.toString());
            return null;
        }
    }
}
