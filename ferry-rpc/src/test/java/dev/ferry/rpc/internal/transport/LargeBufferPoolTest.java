package dev.ferry.rpc.internal.transport;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/** Reuse and bounds of the receive buffer pool. */
class LargeBufferPoolTest {
    private static final int SIZE = 3 << 20;

    @Test
    void aBlockComesBackOnlyWhenNoViewOfItIsReachable() {
        LargeBufferPool pool = new LargeBufferPool(64L << 20, false);
        ByteBuffer carrier = pool.acquire(SIZE);
        assertThat(carrier.capacity()).isEqualTo(SIZE);
        assertThat(carrier.isDirect()).isTrue();
        ByteBuffer view = carrier.duplicate().position(10).slice();
        view.put(0, (byte) 42);
        carrier = null;
        // The carrier itself is unreachable, but a view of it is not: the block stays lent.
        for (int i = 0; i < 3; i++) {
            System.gc();
            assertThat(pool.lentBytes()).isEqualTo(SIZE);
        }
        assertThat(view.get(0)).isEqualTo((byte) 42);
        view = null;
        awaitFree(pool);
        long before = pool.blockBytes();
        ByteBuffer again = pool.acquire(SIZE - 100); // memory of the pool, none new
        assertThat(again.capacity()).isEqualTo(SIZE - 100);
        assertThat(pool.blockBytes()).isEqualTo(before);
        assertThat(pool.stats()).contains("reused=1");
    }

    @Test
    void returnedRangesMergeSoSmallFramesMemoryServesALargeOne() {
        LargeBufferPool pool = new LargeBufferPool(8L << 20, false);
        for (int i = 0; i < 8; i++) {
            pool.acquire(1 << 20); // unreachable at once
        }
        awaitLent(pool, 0);
        ByteBuffer large = pool.acquire(6 << 20);
        assertThat(large.capacity()).isEqualTo(6 << 20);
        assertThat(pool.blockBytes()).isEqualTo(8L << 20);
        assertThat(pool.lentBytes()).isEqualTo(6L << 20);
    }

    @Test
    void neverHoldsMoreThanItsCapacity() {
        LargeBufferPool pool = new LargeBufferPool(8L << 20, false);
        ByteBuffer a = pool.acquire(SIZE);
        ByteBuffer b = pool.acquire(SIZE);
        ByteBuffer c = pool.acquire(SIZE); // no room: an ordinary buffer the pool forgets
        assertThat(c.capacity()).isEqualTo(SIZE);
        assertThat(pool.blockBytes()).isLessThanOrEqualTo(8L << 20);
        assertThat(a).isNotSameAs(b);
    }

    @Test
    void collectsWhenEveryBlockIsLentAndUnreachable() {
        LargeBufferPool pool = new LargeBufferPool(8L << 20, true);
        pool.acquire(SIZE);
        pool.acquire(SIZE); // both unreachable at once, but nothing has collected them yet
        ByteBuffer third = pool.acquire(SIZE);
        assertThat(third.capacity()).isEqualTo(SIZE);
        assertThat(pool.blockBytes()).isLessThanOrEqualTo(8L << 20);
    }

    @Test
    void aZeroCapacityMeansNoPool() {
        LargeBufferPool pool = new LargeBufferPool(0, true);
        assertThat(pool.acquire(SIZE).capacity()).isEqualTo(SIZE);
        assertThat(pool.blockBytes()).isZero();
    }

    /** Bounded: the garbage collector finds the unreachable carrier within a few collections. */
    private static void awaitFree(LargeBufferPool pool) {
        awaitLent(pool, 0);
    }

    private static void awaitLent(LargeBufferPool pool, long bytes) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (pool.lentBytes() > bytes) {
            assertThat(System.nanoTime()).as("block returned within 10 s").isLessThan(deadline);
            System.gc();
            Thread.onSpinWait();
        }
    }
}
