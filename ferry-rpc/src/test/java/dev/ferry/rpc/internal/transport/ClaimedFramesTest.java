package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.apache.fory.serializer.BufferObject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A peer that claims large frames and sends none of them (the two 14-byte chunk headers
 * claiming 254 MiB each) costs address space, not memory: the receive pool's fresh memory is
 * committed as it is written, outside the JVM's direct-memory limit, and the next peer's 4 MiB frame
 * still finds memory. Where fresh memory is committed at once (off Linux, reached here through the
 * pool's seam; or past the bound on mapped memory) the claims cost what arrives too: the frames'
 * memory is taken in steps as their chunks come. Measured on the process's resident memory and
 * the JVM's direct memory.
 */
class ClaimedFramesTest {
    private static final long MIB = 1 << 20;

    private static long residentBytes() throws IOException {
        String[] fields = Files.readString(Path.of("/proc/self/statm")).trim().split("\\s+");
        return Long.parseLong(fields[1]) * 4096;
    }

    private static long directMemory() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(pool -> pool.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
    }

    /**
     * Four claims of 254 MiB that send their first chunk (1 MiB) each hold the 4 MiB they sent; with
     * the claimed size taken at once they took 1,016 MiB of direct memory. Another peer's 40 MiB call,
     * assembled meanwhile in the same pool, arrives intact.
     */
    @Test
    void claimsCostWhatArrivesWhereMemoryIsCommittedAtOnce() throws IOException {
        LargeBufferPool pool = new LargeBufferPool(512L << 20, new MemoryPressure(false), false);
        // The pool's first region (committed at once), as after any large frame: the pool's own
        // cost, bounded by its capacity, whoever fills it.
        pool.takeBack(pool.acquire(Chunks.CHUNK_BYTES));
        try {
            assertSendingFirstChunksCostsWhatArrives(pool, true);
        } finally {
            pool.clear();
        }
    }

    /**
     * With a lazy pool but as much mapped memory not yet unmapped as {@link LazyMemory} allows (its
     * fresh buffers are then {@code allocateDirect}'s, committed at once), claims are taken in steps
     * too: before, each took its 254 MiB of direct memory.
     */
    @Test
    void claimsCostWhatArrivesPastTheBoundOnMappedMemory() throws IOException {
        assumeTrue(LazyMemory.isLazy(), "anonymous mappings need Java 22+ on Linux");
        long mappedBefore = LazyMemory.mappedBytes();
        List<ByteBuffer> held = new ArrayList<>(); // address space up to the bound, none of it written
        for (int size = 256 << 20; size >= 1 << 20; ) {
            if (LazyMemory.wouldMap(size)) {
                held.add(LazyMemory.allocate(size));
            } else {
                size /= 2;
            }
        }
        LargeBufferPool pool = new LargeBufferPool(512L << 20, new MemoryPressure(false));
        assertThat(pool.isLazy(254 << 20)).isFalse();
        try {
            pool.takeBack(pool.acquire(Chunks.CHUNK_BYTES)); // the pool's first region, as above
            // Not every claim need step: the collector may meanwhile unmap what earlier tests left,
            // and a claim that then finds room is mapped whole, which costs what arrives too.
            assertSendingFirstChunksCostsWhatArrives(pool, false);
        } finally {
            pool.clear();
            held.clear();
            awaitUnmappedDownTo(mappedBefore); // the next tests find memory mapped as usual
        }
    }

    /**
     * @param everyClaimSteps the pool's memory is committed at once whatever is mapped, so every
     *                        claim must hold exactly what it sent (else resident and direct memory
     *                        are the measure)
     */
    private static void assertSendingFirstChunksCostsWhatArrives(LargeBufferPool pool, boolean everyClaimSteps)
            throws IOException {
        long residentBefore = residentBytes();
        long directBefore = directMemory();
        FrameAssembler hostile = new FrameAssembler(1L << 30, pool);
        FrameAssembler other = new FrameAssembler(1L << 30, pool);
        byte[] firstChunk = new byte[Chunks.CHUNK_BYTES];
        int claims = 4;
        for (int stream = 0; stream < claims; stream++) {
            hostile.startChunk(Chunks.header(ByteBufAllocator.DEFAULT, stream, 254 << 20, firstChunk.length)
                    .skipBytes(4), firstChunk.length);
            assertThat(hostile.append(Unpooled.wrappedBuffer(firstChunk))).isNull();
        }
        long claimedResident = residentBytes() - residentBefore;
        long claimedDirect = directMemory() - directBefore;
        long sent = (long) claims * firstChunk.length;
        System.out.printf("%d claims of 254 MiB with their first chunk each (%d MiB), memory committed at once:"
                + " resident %+.1f MiB, JVM direct memory %+.1f MiB; the claims hold %d MiB%n", claims, sent >> 20,
                claimedResident / (double) MIB, claimedDirect / (double) MIB, hostile.partialBytes() >> 20);
        long held = hostile.partialBytes();
        if (everyClaimSteps) {
            assertThat(held).as("what the claims hold").isEqualTo(sent);
        }
        assertThat(claimedDirect).as("direct memory the claims took").isLessThan(16 * MIB);
        assertThat(claimedResident).as("resident memory the claims took").isLessThan(64 * MIB);

        long id = 5;
        int size = 40 << 20;
        InboundMessage message = receive(other, TestFrames.frameBytes(id, size));
        ByteBuffer data = message.outOfBand().get(0);
        assertThat(data.remaining()).isEqualTo(size + 1); // and the order byte
        for (int i = 0; i < size; i += 4093) {
            assertThat(data.get(data.position() + i)).isEqualTo((byte) (i * id));
        }
        assertThat(hostile.partialBytes()).as("what the claims hold after the other call").isEqualTo(held);
        hostile.clear();
    }

    /** Receives {@code frame} in chunks as a worker sends it. */
    private static InboundMessage receive(FrameAssembler assembler, byte[] frame) {
        InboundMessage message = null;
        for (int at = 0; at < frame.length; at += Chunks.CHUNK_BYTES) {
            int n = Math.min(Chunks.CHUNK_BYTES, frame.length - at);
            assembler.startChunk(Chunks.header(ByteBufAllocator.DEFAULT, 7, frame.length, n).skipBytes(4), n);
            message = assembler.append(Unpooled.wrappedBuffer(frame, at, n));
        }
        assertThat(message).isNotNull();
        return message;
    }

    /**
     * Waits until what was mapped is unmapped again, down to {@code bytes}: mappings are unmapped
     * once the collector finds them unreachable, and the reference handler thread hands them over,
     * which on a loaded machine took seconds.
     */
    private static void awaitUnmappedDownTo(long bytes) {
        long deadline = System.nanoTime() + 40_000_000_000L;
        while (LazyMemory.mappedBytes() > bytes) {
            assertThat(System.nanoTime()).as("unmapped within 40 s").isLessThan(deadline);
            System.gc();
            Thread.onSpinWait();
        }
    }

    @Test
    void claimsCostWhatArrivesAndAnotherPeersFrameStillFindsMemory() throws IOException {
        assumeTrue(LazyMemory.isLazy(), "anonymous mappings need Java 22+ on Linux");
        LargeBufferPool pool = new LargeBufferPool(512L << 20, new MemoryPressure(false)); // the default receive pool
        long residentBefore = residentBytes();
        long directBefore = directMemory();
        FrameAssembler hostile = new FrameAssembler(1L << 30, pool);
        FrameAssembler other = new FrameAssembler(1L << 30, pool);
        for (int stream = 0; stream < 2; stream++) {
            hostile.startChunk(Chunks.header(ByteBufAllocator.DEFAULT, stream, 254 << 20, 1).skipBytes(4), 1);
            hostile.append(Unpooled.wrappedBuffer(new byte[1]));
        }
        long claimedResident = residentBytes() - residentBefore;
        long claimedDirect = directMemory() - directBefore;
        // the next peer's 4 MiB frame, in chunks, assembles in memory of its own
        InboundMessage message = receive(other, TestFrames.frameBytes(1, 4 << 20));
        assertThat(message.outOfBand().get(0).remaining()).isGreaterThanOrEqualTo(4 << 20);
        System.out.printf("two claims of 254 MiB with a byte each: resident %+.1f MiB, JVM direct memory %+.1f MiB;"
                + " the pool lent %d MiB%n", claimedResident / (double) MIB, claimedDirect / (double) MIB,
                pool.lentBytes() >> 20);
        assertThat(claimedResident).as("resident memory the claims took").isLessThan(64 * MIB);
        assertThat(claimedDirect).as("direct memory the claims took").isLessThan(16 * MIB);
        assertThat(hostile.partialBytes()).isEqualTo(2L * (254 << 20));
        hostile.clear();
        pool.clear();
    }
}
