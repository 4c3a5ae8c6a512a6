package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.LentMemory;
import dev.ferry.rpc.internal.wire.Loans;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Direct memory that large received frames are assembled in, reused from message to message.
 *
 * <h2>Why</h2>
 * Fresh memory is expensive: the kernel zeroes and maps every page on first touch (on this project's
 * VM a fresh 128 MiB direct buffer costs ~60 ms, more than sending it over a Unix socket). Memory
 * that was used before costs nothing to touch again.
 *
 * <h2>Layout</h2>
 * The pool holds <em>regions</em> of direct memory (at least {@link #REGION_BYTES} each, allocated as
 * large frames arrive) and lends <em>ranges</em> of them (first fit, sizes in {@link #GRANULE}s);
 * returned ranges merge with free neighbours, so memory used for 1 MiB frames serves 16 MiB ones
 * later.
 *
 * <h2>How a range comes back</h2>
 * A range is lent as a <em>carrier</em>: a {@link ByteBuffer} of its own over the region's memory,
 * without attachment, so that every view decoded from the frame (a {@link ByteBuffer} argument
 * handed to application code, the message's own buffers) refers to the carrier. The range returns
 * to the pool when the carrier becomes unreachable, i.e. when the garbage collector finds that
 * nobody holds a view any more (a phantom reference; the JDK frees direct buffers the same way).
 * Decoding into arrays copies, so their carriers die right after decoding; a {@link ByteBuffer}
 * argument lives as long as the application keeps it.
 *
 * <p>Or earlier: where the Foreign Memory API allows, a carrier is a view with an arena of its own
 * ({@link Loans}), and its range is a {@link Loans.Loan} that the application can release
 * ({@link dev.ferry.rpc.ReceivedBuffers}) and that sends reading it pin. A released range comes
 * back as soon as no send pins it: its arena is closed (every view of it then refuses access) and
 * the range is free at once, without a collection. Ferry itself releases the ranges it copies
 * outgoing frames into ({@code FrameCodec}) once they are written.
 *
 * <h2>Bounds</h2>
 * At most {@code capacityBytes} of regions exist: the pool grows to that as large frames arrive,
 * then recycles. When no free range fits and a third of the capacity (at least
 * {@link #MIN_COLLECT_WORTH_BYTES}) or more is lent, or the pool is full, it asks for a
 * collection in the background ({@link MemoryPressure}), so that the ranges the application
 * dropped come back for later frames, and, without waiting, grows, dropping wholly free regions if
 * needed, or else hands out an ordinary direct buffer that the pool forgets (the JDK frees it when
 * it is unreachable). It never collects on the thread that asks for memory: that is an event loop,
 * and every message behind the frame would wait for the collection.
 *
 * <p>Fresh memory, regions and those buffers alike, is committed as it is written ({@link
 * LazyMemory}) where it can be ({@link #isLazy}): a range lent for a frame whose chunks have not
 * arrived (a peer that claimed a large frame and stopped) holds address space, not memory, and does
 * not count against the JVM's direct-memory limit, so it cannot make the next frame of another peer
 * fail to find memory. Where it cannot (off Linux, or past {@link LazyMemory}'s bound), the
 * {@link FrameAssembler} asks for a frame's memory in steps as its chunks arrive and {@linkplain
 * #takeBack gives back} each step it outgrew.
 *
 * <p>This class is thread-safe.
 */
final class LargeBufferPool {
    private static final Logger log = LoggerFactory.getLogger(LargeBufferPool.class);
    /** Ranges are sized in whole units of this. */
    static final int GRANULE = 64 << 10;
    /** Least size of a region. */
    static final int REGION_BYTES = 64 << 20;
    /**
     * Least lent bytes from which a collection is worth asking for rather than touching fresh
     * memory: a collection of a worker's small heap costs ~20-25 ms here, fresh memory ~0.5 ms per MiB.
     * The pool waits for a third of its capacity to be lent ({@link #collectWorthBytes}): it then
     * touches more fresh memory once, while it grows, but collects less often for good (W3 over TCP,
     * 16 MiB echoes: half the collections and a lower p90 than from 64 MiB on).
     */
    static final long MIN_COLLECT_WORTH_BYTES = 64L << 20;

    private final long capacityBytes;
    /** Lent bytes from which the pool asks for a collection when no free range fits. */
    private final long collectWorthBytes;
    /** Asks for collections when lent ranges run the pool short. */
    private final MemoryPressure pressure;
    /** Whether fresh memory may be {@link LazyMemory}'s (else always {@code allocateDirect}'s). */
    private final boolean lazy;
    private final ReferenceQueue<ByteBuffer> returned = new ReferenceQueue<>();
    // All under this.
    private final List<Region> regions = new ArrayList<>();
    private final Set<Lease> lent = Collections.newSetFromMap(new IdentityHashMap<>());
    private long regionBytes;
    private long lentBytes;
    private long fresh;
    private long reused;
    /** Ranges the application released before the garbage collector found them. */
    private long released;

    LargeBufferPool(long capacityBytes, MemoryPressure pressure) {
        this(capacityBytes, pressure, LazyMemory.isLazy());
    }

    /**
     * @param lazy false: fresh memory is {@code allocateDirect}'s, committed at once, as it is off
     *             Linux (so that tests on Linux reach what other platforms run)
     */
    LargeBufferPool(long capacityBytes, MemoryPressure pressure, boolean lazy) {
        this.capacityBytes = capacityBytes;
        this.collectWorthBytes = Math.max(MIN_COLLECT_WORTH_BYTES, capacityBytes / 3);
        this.pressure = pressure;
        this.lazy = lazy;
    }

    /**
     * Whether fresh memory of {@code size} bytes, taken now, would be committed only as it is
     * written: a buffer of that size then costs what is written into it, whatever it was asked for.
     */
    boolean isLazy(int size) {
        return lazy && LazyMemory.wouldMap(size);
    }

    /**
     * Takes back at once a buffer it lent that nothing refers to any more (every view of it then
     * refuses access), where views can be closed ({@link Loans}); else it comes back when
     * unreachable, as any other.
     */
    void takeBack(ByteBuffer carrier) {
        Loans.Loan loan = Loans.find(carrier);
        if (loan != null) {
            loan.release();
        }
    }

    /** A buffer of exactly {@code size} bytes (position 0, limit {@code size}), contents undefined. */
    synchronized ByteBuffer acquire(int size) {
        int length = rangeSize(size);
        if (capacityBytes < length) {
            fresh++;
            return allocate(size);
        }
        reclaim();
        ByteBuffer carrier = lend(length, size);
        if (carrier == null && (lentBytes >= collectWorthBytes || lentBytes + length > capacityBytes)) {
            pressure.collectSoon(this::lentBytes);
        }
        if (carrier != null) {
            reused++;
            return carrier;
        }
        int newRegion = (int) Math.max(length, Math.min(REGION_BYTES, capacityBytes));
        dropFreeRegionsUntil(capacityBytes - newRegion);
        fresh++;
        if (regionBytes + newRegion > capacityBytes) {
            if (log.isDebugEnabled()) {
                log.debug("receive buffer pool full of lent ranges: {}", stats());
            }
            return allocate(size);
        }
        regions.add(new Region(allocate(newRegion)));
        regionBytes += newRegion;
        return lend(length, size);
    }

    private ByteBuffer allocate(int size) {
        return lazy ? LazyMemory.allocate(size) : ByteBuffer.allocateDirect(size);
    }

    /** Bytes of regions held. */
    synchronized long blockBytes() {
        return regionBytes;
    }

    /** Bytes of regions free for reuse now. */
    synchronized long freeBytes() {
        reclaim();
        return regionBytes - lentBytes;
    }

    /** Bytes lent and not known to be unreachable yet. */
    synchronized long lentBytes() {
        reclaim();
        return lentBytes;
    }

    /** Counters for diagnostics: fresh and reused buffers handed out, collections asked for. */
    synchronized String stats() {
        return "regions=" + regions.size() + " (" + (regionBytes >> 20) + " MiB) lent=" + (lentBytes >> 20)
                + " MiB fresh=" + fresh + " reused=" + reused + " released=" + released;
    }

    /** Forgets every region (the transport closed); lent ones are freed by the JDK when unreachable. */
    synchronized void clear() {
        if (log.isDebugEnabled()) {
            log.debug("receive buffer pool at close: {}", stats());
        }
        for (Lease lease : lent) {
            if (lease.scope != null) {
                Loans.unregister(lease.scope); // a view still held now returns to the JDK, not here
            }
        }
        regions.clear();
        lent.clear();
        regionBytes = 0;
        lentBytes = 0;
    }

    static int rangeSize(int size) {
        long rounded = ((long) size + GRANULE - 1) / GRANULE * GRANULE;
        return (int) Math.min(rounded, Integer.MAX_VALUE - 8);
    }

    /** Lends the first free range of {@code length} bytes in any region, or null. */
    private ByteBuffer lend(int length, int size) {
        for (Region region : regions) {
            int offset = region.take(length);
            if (offset >= 0) {
                Loans.View view = Loans.closableView(region.memory, offset, size);
                ByteBuffer carrier = view != null ? view.buffer() : carrier(region.memory, offset, size);
                Lease lease = new Lease(carrier, region, offset, length, returned,
                        view != null ? view.arena() : null, view != null ? view.scope() : null);
                lent.add(lease);
                lentBytes += length;
                if (view != null) {
                    Loans.register(view.scope(), lease);
                }
                return carrier;
            }
        }
        return null;
    }

    private void reclaim() {
        Reference<? extends ByteBuffer> ref;
        while ((ref = returned.poll()) != null) {
            giveBack((Lease) ref);
        }
    }

    private void giveBack(Lease lease) {
        if (lease.scope != null) {
            Loans.unregister(lease.scope);
        }
        if (lent.remove(lease)) {
            lease.region.release(lease.offset, lease.length);
            lentBytes -= lease.length;
        }
    }

    /**
     * The application released {@code lease} and nothing sends from it: makes its views unusable,
     * then takes its range back. Outside the lock: closing an arena waits for every thread to reach
     * a safe point.
     */
    private void returnEarly(Lease lease) {
        Loans.unregister(lease.scope);
        if (!Loans.close(lease.arena)) {
            // Another thread is using a view at this very moment: the garbage collector returns the
            // range once nothing refers to it, as for any range not released.
            log.debug("a released receive buffer is in use by another thread; it returns when unreachable");
            return;
        }
        lease.clear();
        synchronized (this) {
            if (lent.contains(lease)) {
                released++;
            }
            giveBack(lease);
        }
    }

    /** Drops wholly free regions until at most {@code limit} bytes of regions are held. */
    private void dropFreeRegionsUntil(long limit) {
        for (Iterator<Region> it = regions.iterator(); it.hasNext() && regionBytes > limit; ) {
            Region region = it.next();
            if (region.isWhollyFree()) {
                it.remove();
                regionBytes -= region.memory.capacity();
            }
        }
    }

    /** A direct buffer over {@code size} bytes of {@code region} at {@code offset} that is its own root. */
    static ByteBuffer carrier(ByteBuffer region, int offset, int size) {
        return MemorySegment.ofBuffer(region).asSlice(offset, size).asByteBuffer();
    }

    /** One allocation of direct memory and its free ranges (offset to length, never adjacent). */
    private static final class Region {
        final ByteBuffer memory;
        final FreeRanges free;

        Region(ByteBuffer memory) {
            this.memory = memory;
            this.free = new FreeRanges(0, memory.capacity());
        }

        /** Takes {@code length} bytes from the first free range large enough: its offset, or -1. */
        int take(int length) {
            return free.take(length);
        }

        void release(int offset, int length) {
            free.release(offset, length);
        }

        boolean isWhollyFree() {
            return free.whollyFree();
        }
    }

    /**
     * A lent range: comes back when its carrier is unreachable, or earlier when the application
     * releases it ({@link Loans}) and no send refers to it.
     */
    private final class Lease extends LentMemory {
        final Region region;
        final int offset;
        final int length;
        /**
         * The carrier's arena and scope; null where views cannot be closed (then no early return).
         * Never the carrier itself: the lease must not keep it reachable.
         */
        final Arena arena;
        final MemorySegment.Scope scope;

        Lease(ByteBuffer carrier, Region region, int offset, int length, ReferenceQueue<ByteBuffer> queue,
              Arena arena, MemorySegment.Scope scope) {
            super(carrier, queue);
            this.region = region;
            this.offset = offset;
            this.length = length;
            this.arena = arena;
            this.scope = scope;
        }

        @Override
        protected void returnEarly() {
            LargeBufferPool.this.returnEarly(this);
        }
    }
}
