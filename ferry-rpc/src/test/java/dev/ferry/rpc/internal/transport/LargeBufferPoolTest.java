package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.testing.Eventually;

import dev.ferry.rpc.ReceivedBuffers;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.Loans;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.apache.fory.memory.MemoryBuffer;
import org.apache.fory.serializer.BufferObject;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Reuse and bounds of the receive buffer pool. */
class LargeBufferPoolTest {
    private static final int SIZE = 3 << 20;

    @Test
    void aBlockComesBackOnlyWhenNoViewOfItIsReachable() {
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
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
        LargeBufferPool pool = new LargeBufferPool(8L << 20, new MemoryPressure(false));
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
        LargeBufferPool pool = new LargeBufferPool(8L << 20, new MemoryPressure(false));
        ByteBuffer a = pool.acquire(SIZE);
        ByteBuffer b = pool.acquire(SIZE);
        ByteBuffer c = pool.acquire(SIZE); // no room: an ordinary buffer the pool forgets
        assertThat(c.capacity()).isEqualTo(SIZE);
        assertThat(pool.blockBytes()).isLessThanOrEqualTo(8L << 20);
        assertThat(a).isNotSameAs(b);
    }

    @Test
    void whenEveryBlockIsLentItAsksForACollectionInTheBackgroundAndDoesNotWait() {
        MemoryPressure pressure = new MemoryPressure(true);
        LargeBufferPool pool = new LargeBufferPool(8L << 20, pressure);
        pool.acquire(SIZE);
        pool.acquire(SIZE); // both unreachable at once, but nothing has collected them yet
        ByteBuffer third = pool.acquire(SIZE); // fresh memory now: the caller is an event loop
        assertThat(third.capacity()).isEqualTo(SIZE);
        assertThat(pool.blockBytes()).isLessThanOrEqualTo(8L << 20);
        Eventually.until("a collection was asked for", () -> pressure.collections() >= 1);
        awaitLent(pool, 0); // what it found came back (the third is an ordinary buffer: no room for it)
        ByteBuffer fourth = pool.acquire(SIZE);
        assertThat(pool.lentBytes()).as("the fourth reuses a returned range").isEqualTo(LargeBufferPool.rangeSize(SIZE));
        assertThat(pool.blockBytes()).isLessThanOrEqualTo(8L << 20);
        assertThat(third.capacity()).isEqualTo(fourth.capacity());
    }

    @Test
    void aZeroCapacityMeansNoPool() {
        LargeBufferPool pool = new LargeBufferPool(0, new MemoryPressure(true));
        assertThat(pool.acquire(SIZE).capacity()).isEqualTo(SIZE);
        assertThat(pool.blockBytes()).isZero();
    }

    @Test
    void aReleasedRangeComesBackAtOnceAndItsViewsRefuseAccess() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        ByteBuffer carrier = pool.acquire(SIZE);
        FloatBuffer floats = carrier.duplicate().position(4).slice().asFloatBuffer();
        floats.put(0, 1.5f);
        assertThat(ReceivedBuffers.release(floats)).isTrue(); // any view releases the whole range
        assertThat(pool.lentBytes()).isZero();
        assertThatThrownBy(() -> floats.get(0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> carrier.put(0, (byte) 1)).isInstanceOf(IllegalStateException.class);
        assertThat(pool.stats()).contains("released=1");

        ByteBuffer next = pool.acquire(SIZE); // the same memory, for another message
        next.put(0, (byte) 7);
        assertThat(pool.blockBytes()).isEqualTo(64L << 20);
        // A stale view neither releases nor touches the memory's next owner.
        assertThat(ReceivedBuffers.release(carrier)).isFalse();
        assertThat(pool.lentBytes()).isEqualTo(SIZE);
        assertThat(next.get(0)).isEqualTo((byte) 7);
    }

    @Test
    void releasingTwiceOrReleasingForeignBuffersIsANoOp() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        ByteBuffer carrier = pool.acquire(SIZE);
        assertThat(ReceivedBuffers.release(carrier)).isTrue();
        assertThat(ReceivedBuffers.release(carrier)).isFalse();
        ByteBuffer own = ByteBuffer.allocateDirect(SIZE);
        assertThat(ReceivedBuffers.release(own)).isFalse();
        assertThat(ReceivedBuffers.release(ByteBuffer.allocate(16))).isFalse();
        own.put(0, (byte) 3); // untouched
        assertThat(own.get(0)).isEqualTo((byte) 3);
        assertThat(pool.lentBytes()).isZero();
    }

    @Test
    void aPinnedRangeComesBackOnlyWhenTheSendIsDone() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        ByteBuffer carrier = pool.acquire(SIZE);
        carrier.put(0, (byte) 9);
        Loans.Loan sending = Loans.pinForSend(carrier);
        assertThat(sending).isNotNull();
        assertThat(ReceivedBuffers.release(carrier)).isTrue();
        // Still being written: the memory is not lent to anyone else yet.
        assertThat(pool.lentBytes()).isEqualTo(SIZE);
        ByteBuffer other = pool.acquire(SIZE);
        assertThat(pool.lentBytes()).isEqualTo(2L * SIZE);
        other.put(0, (byte) 1);
        assertThat(carrier.get(0)).isEqualTo((byte) 9);
        assertThatThrownBy(() -> Loans.pinForSend(carrier)).isInstanceOf(RpcException.class)
                .hasMessageContaining("release");
        sending.unpin();
        assertThat(pool.lentBytes()).isEqualTo(SIZE);
        assertThatThrownBy(() -> carrier.get(0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> Loans.pinForSend(carrier)).isInstanceOf(RpcException.class);
    }

    @Test
    void releaseAfterSendReturnsTheRangeWhenTheNextSendIsDone() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        ByteBuffer carrier = pool.acquire(SIZE);
        ByteBuffer view = carrier.duplicate().position(100).slice();
        assertThat(ReceivedBuffers.releaseAfterSend(view)).isSameAs(view);
        assertThat(pool.lentBytes()).isEqualTo(SIZE);
        view.put(0, (byte) 5); // usable until sent
        Loans.Loan sending = Loans.pinForSend(view);
        sending.unpin();
        assertThat(pool.lentBytes()).isZero();
        assertThatThrownBy(() -> view.get(0)).isInstanceOf(IllegalStateException.class);
        ByteBuffer own = ByteBuffer.allocateDirect(16);
        assertThat(ReceivedBuffers.releaseAfterSend(own)).isSameAs(own);
        assertThat(Loans.pinForSend(own)).isNull();
    }

    @Test
    void aFrameReferringToReceivedMemoryPinsItUntilReleased() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        ByteBuffer received = pool.acquire(SIZE);
        received.put(SIZE - 1, (byte) 6);
        ByteBuf frame = FrameCodec.encode(message(new BufferObject.ByteBufferBufferObject(received)),
                ByteBufAllocator.DEFAULT, 1L << 30);
        assertThat(ReceivedBuffers.release(received)).isTrue(); // while the frame is not written yet
        assertThat(pool.lentBytes()).isEqualTo(SIZE);
        pool.acquire(SIZE).put(SIZE - 1, (byte) 1); // another message: other memory
        assertThat(frame.getByte(frame.writerIndex() - 2)).isEqualTo((byte) 6); // then the order byte
        frame.release(); // written
        awaitLent(pool, SIZE); // the other message's range (unreachable now) may come back too
        assertThatThrownBy(() -> FrameCodec.encode(message(new BufferObject.ByteBufferBufferObject(received)),
                ByteBufAllocator.DEFAULT, 1L << 30)).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE));
    }

    @Test
    void aFrameCopiedIntoPooledMemoryGivesItBackWhenWritten() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        byte[] array = new byte[SIZE];
        array[SIZE - 1] = 3;
        BufferObject copied = new BufferObject() { // as Fory writes a primitive array: copied into the frame
            @Override
            public int totalBytes() {
                return SIZE;
            }

            @Override
            public void writeTo(MemoryBuffer buffer) {
                buffer.writeBytes(array);
            }

            @Override
            public MemoryBuffer toBuffer() {
                return MemoryBuffer.fromByteArray(array);
            }
        };
        ByteBuf frame = FrameCodec.encode(message(copied), ByteBufAllocator.DEFAULT, 1L << 30, pool::acquire);
        ByteBuf chunk = frame.retainedSlice(0, 1 << 20); // as the queue writes a large frame
        frame.release();
        assertThat(pool.lentBytes()).isGreaterThanOrEqualTo(SIZE);
        chunk.release(); // the last piece written
        assertThat(pool.lentBytes()).isZero();
        assertThat(pool.stats()).contains("released=1");
    }

    private static OutboundMessage message(BufferObject buffer) {
        return new OutboundMessage(MessageKind.REPLY, 1, CallHeaders.empty(),
                new EncodedPayload(new byte[] {1}, List.of(buffer)));
    }

    @Test
    void aClearedPoolForgetsItsLoansAndTheirViewsStayUsable() {
        assumeTrue(Loans.available());
        LargeBufferPool pool = new LargeBufferPool(64L << 20, new MemoryPressure(false));
        ByteBuffer carrier = pool.acquire(SIZE);
        carrier.put(0, (byte) 4);
        pool.clear();
        assertThat(ReceivedBuffers.release(carrier)).isFalse();
        System.gc();
        assertThat(carrier.get(0)).isEqualTo((byte) 4);
    }

    /** Bounded: the garbage collector finds the unreachable carrier within a few collections. */
    private static void awaitFree(LargeBufferPool pool) {
        awaitLent(pool, 0);
    }

    /**
     * Waits until the collector has found what the pool lent beyond {@code bytes}: each collection
     * queues the unreachable carriers, and the JDK's reference handler thread hands them over,
     * which on a loaded machine (two CPUs shared by a dozen busy JVMs) took over 10 s once.
     */
    private static void awaitLent(LargeBufferPool pool, long bytes) {
        long deadline = System.nanoTime() + 40_000_000_000L;
        while (pool.lentBytes() > bytes) {
            assertThat(System.nanoTime()).as("block returned within 40 s").isLessThan(deadline);
            System.gc();
            Thread.onSpinWait();
        }
    }
}
