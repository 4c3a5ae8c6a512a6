package dev.ferry.rpc.internal.transport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Direct memory that large received frames are assembled in, reused from message to message.
 *
 * <h2>Why</h2>
 * Fresh memory is expensive: the kernel zeroes and maps every page on first touch (on this project's
 * VM a fresh 128 MiB direct buffer costs ~60 ms, more than sending it over a Unix socket). Memory
 * that was used before costs nothing to touch again.
 *
 * <h2>How a buffer comes back</h2>
 * A frame's buffer is lent as a <em>carrier</em>: a {@link ByteBuffer} of its own over the pooled
 * block's memory, without attachment, so that every view decoded from the frame (a {@link ByteBuffer}
 * argument handed to application code, the message's own buffers) refers to the carrier. The block
 * returns to the pool when the carrier becomes unreachable, i.e. when the garbage collector finds
 * that nobody holds a view any more (a phantom reference; the JDK frees direct buffers the same way).
 * Decoding into arrays copies, so their carriers die right after decoding; a {@link ByteBuffer}
 * argument lives as long as the application keeps it.
 *
 * <h2>Bounds</h2>
 * At most {@code capacityBytes} of blocks exist (free and lent): the pool grows to that as large
 * frames arrive, then recycles. When a frame needs a block and the pool is full of lent ones, the pool asks the JVM for a collection ({@link System#gc()}, as the JDK
 * does when its direct memory runs out; at most every {@link #MIN_GC_INTERVAL_NANOS}, less often
 * while collections bring nothing back, and only with {@code collectWhenExhausted}), waits briefly
 * (at most {@code RETURN_WAIT_MILLIS}) for blocks to come back, and otherwise hands out an
 * ordinary direct buffer that the pool forgets (the JDK frees it when it is unreachable). Free blocks
 * of other sizes are dropped to make room for the size needed.
 *
 * <p>This class is thread-safe.
 */
final class LargeBufferPool {
    private static final Logger log = LoggerFactory.getLogger(LargeBufferPool.class);
    /** Blocks are sized in whole units of this, so request and reply of one tensor share a size. */
    static final int GRANULE = 64 << 10;
    /** The least time between two collections the pool asks for. */
    static final long MIN_GC_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /**
     * Lent bytes from which a collection is worth asking for rather than touching fresh memory: a
     * collection of a worker's small heap costs ~20 ms here, fresh memory ~0.5 ms per MiB.
     */
    static final long COLLECT_WORTH_BYTES = 64L << 20;
    /** How long a frame waits for blocks to come back after a collection. */
    private static final long RETURN_WAIT_MILLIS = 20;

    /**
     * Makes a carrier: {@code MemorySegment.ofBuffer(block).asSlice(0, size).asByteBuffer()}, a
     * direct buffer that is its own root (views of it refer to it, not to the block). Looked up at
     * run time because the Foreign Memory API is final only from Java 22 and Ferry compiles for 21;
     * null where it is missing, and then there is no pool.
     */
    private static final MethodHandle CARRIER = carrierFactory();

    private final long capacityBytes;
    private final boolean collectWhenExhausted;
    private final ReferenceQueue<ByteBuffer> returned = new ReferenceQueue<>();
    // All under this.
    private final TreeMap<Integer, ArrayDeque<ByteBuffer>> free = new TreeMap<>();
    private final Set<Lease> lent = Collections.newSetFromMap(new IdentityHashMap<>());
    private long blockBytes;
    private long freeBytes;
    private long lastCollection = System.nanoTime() - MIN_GC_INTERVAL_NANOS;
    /** Grows while collections bring nothing back (say, with -XX:+DisableExplicitGC). */
    private long gcInterval = MIN_GC_INTERVAL_NANOS;
    private long collections;
    private long collectNanos;
    private long fresh;
    private long reused;

    LargeBufferPool(long capacityBytes, boolean collectWhenExhausted) {
        this.capacityBytes = capacityBytes;
        this.collectWhenExhausted = collectWhenExhausted;
    }

    /** A buffer of exactly {@code size} bytes (position 0, limit {@code size}), contents undefined. */
    synchronized ByteBuffer acquire(int size) {
        int blockSize = blockSize(size);
        if (capacityBytes < blockSize || CARRIER == null) {
            return ByteBuffer.allocateDirect(size);
        }
        reclaim();
        ByteBuffer block = takeFree(blockSize);
        long lentBytes = blockBytes - freeBytes;
        if (block == null && collectWhenExhausted
                && (lentBytes >= COLLECT_WORTH_BYTES || lentBytes + blockSize > capacityBytes)) {
            block = collectAndTake(blockSize);
        }
        if (block == null) {
            dropFreeUntil(capacityBytes - blockSize);
            if (blockBytes + blockSize > capacityBytes) {
                fresh++;
                return ByteBuffer.allocateDirect(size);
            }
            block = ByteBuffer.allocateDirect(blockSize);
            blockBytes += blockSize;
            fresh++;
        } else {
            reused++;
        }
        ByteBuffer carrier = carrier(block, size);
        lent.add(new Lease(carrier, block, returned));
        return carrier;
    }

    /** Whether this JVM can pool (Java 22 or newer, or 21 with the preview API allowed). */
    static boolean available() {
        return CARRIER != null;
    }

    private static ByteBuffer carrier(ByteBuffer block, int size) {
        try {
            return (ByteBuffer) CARRIER.invokeExact((Buffer) block, (long) size);
        } catch (Throwable e) {
            throw new IllegalStateException("cannot view a pooled block", e);
        }
    }

    private static MethodHandle carrierFactory() {
        try {
            Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            MethodHandle ofBuffer = lookup.findStatic(segment, "ofBuffer", MethodType.methodType(segment, Buffer.class));
            MethodHandle asSlice = lookup.findVirtual(segment, "asSlice",
                    MethodType.methodType(segment, long.class, long.class));
            MethodHandle asByteBuffer = lookup.findVirtual(segment, "asByteBuffer",
                    MethodType.methodType(ByteBuffer.class));
            // (Buffer block, long size) -> asByteBuffer(asSlice(ofBuffer(block), 0, size))
            MethodHandle slice = MethodHandles.insertArguments(asSlice, 1, 0L); // (segment, size)
            MethodHandle sliceOfBuffer = MethodHandles.collectArguments(slice, 0, ofBuffer); // (block, size)
            MethodHandle factory = MethodHandles.filterReturnValue(sliceOfBuffer, asByteBuffer);
            ByteBuffer probe = (ByteBuffer) factory.invokeExact((Buffer) ByteBuffer.allocateDirect(16), 8L);
            return probe.capacity() == 8 && probe.isDirect() ? factory : null;
        } catch (Throwable e) {
            LoggerFactory.getLogger(LargeBufferPool.class).debug("no receive buffer pool: {}", e.toString());
            return null;
        }
    }

    /** Bytes of blocks held (free and lent). */
    synchronized long blockBytes() {
        return blockBytes;
    }

    /** Bytes of blocks free for reuse now. */
    synchronized long freeBytes() {
        reclaim();
        return freeBytes;
    }

    /** Counters for debug info: blocks handed out fresh and reused, collections asked for. */
    synchronized String stats() {
        return "blocks=" + (blockBytes >> 20) + "MiB free=" + (freeBytes >> 20) + "MiB fresh=" + fresh
                + " reused=" + reused + " gc=" + collections + " gcMs=" + collectNanos / 1_000_000;
    }

    /** Forgets every block (the transport closed); lent ones are freed by the JDK when unreachable. */
    synchronized void clear() {
        if (System.getenv("FERRY_POOL_DEBUG") != null) {
            // Diagnostics for benchmarks (whose workers log little): one line on stderr at close.
            System.err.println("receive buffer pool at close: " + stats());
        }
        free.clear();
        lent.clear();
        blockBytes = 0;
        freeBytes = 0;
    }

    static int blockSize(int size) {
        long rounded = ((long) size + GRANULE - 1) / GRANULE * GRANULE;
        return (int) Math.min(rounded, Integer.MAX_VALUE - 8);
    }

    private ByteBuffer collectAndTake(int blockSize) {
        long now = System.nanoTime();
        if (now - lastCollection < gcInterval) {
            return null;
        }
        lastCollection = now;
        collections++;
        System.gc();
        collectNanos += System.nanoTime() - now;
        long deadline = now + TimeUnit.MILLISECONDS.toNanos(RETURN_WAIT_MILLIS);
        ByteBuffer block;
        long freeBefore = freeBytes;
        while ((block = takeFree(blockSize)) == null) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || lent.isEmpty()) {
                if (freeBytes == freeBefore) {
                    // Nothing came back: the application holds its buffers (or explicit GC is off).
                    gcInterval = Math.min(gcInterval * 2, TimeUnit.SECONDS.toNanos(1));
                }
                return null;
            }
            try {
                Reference<? extends ByteBuffer> ref = returned.remove(Math.max(1, left / 1_000_000));
                if (ref != null) {
                    giveBack((Lease) ref);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        gcInterval = MIN_GC_INTERVAL_NANOS;
        return block;
    }

    private void reclaim() {
        Reference<? extends ByteBuffer> ref;
        while ((ref = returned.poll()) != null) {
            giveBack((Lease) ref);
        }
    }

    private void giveBack(Lease lease) {
        if (lent.remove(lease)) {
            int size = lease.block.capacity();
            free.computeIfAbsent(size, k -> new ArrayDeque<>()).push(lease.block);
            freeBytes += size;
        }
    }

    /** The smallest free block of at least {@code blockSize} bytes and at most twice that, or null. */
    private ByteBuffer takeFree(int blockSize) {
        Map.Entry<Integer, ArrayDeque<ByteBuffer>> fit = free.ceilingEntry(blockSize);
        if (fit == null || fit.getKey() > 2L * blockSize) {
            return null;
        }
        ByteBuffer block = fit.getValue().pop();
        if (fit.getValue().isEmpty()) {
            free.remove(fit.getKey());
        }
        freeBytes -= fit.getKey();
        return block;
    }

    /** Drops free blocks (largest first) until at most {@code limit} bytes of blocks are held. */
    private void dropFreeUntil(long limit) {
        while (blockBytes > limit && !free.isEmpty()) {
            Map.Entry<Integer, ArrayDeque<ByteBuffer>> largest = free.lastEntry();
            largest.getValue().pop();
            if (largest.getValue().isEmpty()) {
                free.remove(largest.getKey());
            }
            blockBytes -= largest.getKey();
            freeBytes -= largest.getKey();
        }
        if (log.isDebugEnabled() && blockBytes > limit) {
            log.debug("receive buffer pool full of lent blocks: {}", stats());
        }
    }

    /** A lent block: comes back when its carrier is unreachable. */
    private static final class Lease extends PhantomReference<ByteBuffer> {
        final ByteBuffer block;

        Lease(ByteBuffer carrier, ByteBuffer block, ReferenceQueue<ByteBuffer> queue) {
            super(carrier, queue);
            this.block = block;
        }
    }
}
