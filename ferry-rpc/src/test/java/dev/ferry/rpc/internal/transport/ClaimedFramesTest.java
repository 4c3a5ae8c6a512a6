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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A peer that claims large frames and sends none of them (the two 14-byte chunk headers
 * claiming 254 MiB each) costs address space, not memory: the receive pool's fresh memory is
 * committed as it is written, outside the JVM's direct-memory limit, and the next peer's 4 MiB frame
 * still finds memory. Measured on the process's resident memory.
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

    /** A frame (without its length prefix) of a call with one out-of-band buffer of {@code size} bytes. */
    private static byte[] frame(int size) {
        EncodedPayload payload = new EncodedPayload(new byte[] {1},
                List.of(new BufferObject.ByteBufferBufferObject(ByteBuffer.wrap(new byte[size]))));
        ByteBuf encoded = FrameCodec.encode(new OutboundMessage(MessageKind.CALL, 1, CallHeaders.empty(), payload),
                ByteBufAllocator.DEFAULT, 1L << 30);
        try {
            byte[] bytes = new byte[encoded.readableBytes() - 4];
            encoded.getBytes(encoded.readerIndex() + 4, bytes);
            return bytes;
        } finally {
            encoded.release();
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
        byte[] frame = frame(4 << 20);
        InboundMessage message = null;
        for (int at = 0; at < frame.length; at += Chunks.CHUNK_BYTES) {
            int n = Math.min(Chunks.CHUNK_BYTES, frame.length - at);
            other.startChunk(Chunks.header(ByteBufAllocator.DEFAULT, 7, frame.length, n).skipBytes(4), n);
            message = other.append(Unpooled.wrappedBuffer(frame, at, n));
        }
        assertThat(message).isNotNull();
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
