package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;
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
import io.netty.channel.embedded.EmbeddedChannel;
import org.apache.fory.serializer.BufferObject;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static dev.ferry.rpc.internal.transport.TestFrames.frameBytes;
import static dev.ferry.rpc.internal.transport.TestFrames.frameWithPrefix;
import static dev.ferry.rpc.internal.transport.TestFrames.writeChunk;

/** The unit parser, fed a byte stream split at arbitrary points (no sockets). */
class UnitReaderTest {
    private static final long MAX = TestFrames.MAX;

    @Test
    void wholeFramesAndInterleavedChunksSurviveAnySplit() {
        ByteBuf stream = Unpooled.buffer();
        // Two large frames (streams 0 and 1) interleaved chunk by chunk, small frames between.
        byte[] first = frameBytes(1, 3 * Chunks.CHUNK_BYTES + 123);
        byte[] second = frameBytes(2, Chunks.CHUNK_BYTES + 5);
        int at0 = 0;
        int at1 = 0;
        int small = 100;
        while (at0 < first.length || at1 < second.length) {
            at0 = writeChunk(stream, 0, first, at0);
            stream.writeBytes(frameWithPrefix(small++, 10));
            at1 = writeChunk(stream, 1, second, at1);
        }
        for (long seed = 0; seed < 5; seed++) {
            List<InboundMessage> got = feed(stream.duplicate(), new SplittableRandom(seed));
            assertThat(got).extracting(InboundMessage::id).contains(1L, 2L).hasSize(2 + small - 100);
            for (InboundMessage message : got) {
                long id = message.id();
                int size = id == 1 ? 3 * Chunks.CHUNK_BYTES + 123 : id == 2 ? Chunks.CHUNK_BYTES + 5 : 10;
                ByteBuffer data = message.outOfBand().get(0);
                assertThat(data.remaining()).isEqualTo(size + 1);
                for (int i = 0; i < size; i += 997) {
                    assertThat(data.get(data.position() + i)).isEqualTo((byte) (i * id));
                }
            }
        }
    }

    @Test
    void wholeFramesOfEverySizeSurviveAnySplitAndEveryReadIsReleased() {
        // Sizes on both sides of UnitReader.MERGE_LIMIT: a short unit split between reads is copied
        // together, a long one composed, and the reader switches between the two.
        int[] sizes = {10, 5_000, UnitReader.MERGE_LIMIT - 60, UnitReader.MERGE_LIMIT + 1, 900_000, 3};
        ByteBuf stream = Unpooled.buffer();
        for (int i = 0; i < 3 * sizes.length; i++) {
            ByteBuf frame = frameWithPrefix(i + 1, sizes[i % sizes.length]);
            stream.writeBytes(frame);
            frame.release();
        }
        for (long seed = 0; seed < 8; seed++) {
            List<InboundMessage> got = feed(stream.duplicate(), new SplittableRandom(seed));
            assertThat(got).extracting(InboundMessage::id).containsExactly(
                    java.util.stream.LongStream.rangeClosed(1, 3 * sizes.length).boxed().toArray(Long[]::new));
            for (InboundMessage message : got) {
                long id = message.id();
                ByteBuffer data = message.outOfBand().get(0);
                int size = sizes[(int) (id - 1) % sizes.length];
                assertThat(data.remaining()).isEqualTo(size + 1);
                for (int i = 0; i < size; i += 31) {
                    assertThat(data.get(data.position() + i)).isEqualTo((byte) (i * id));
                }
            }
            assertThat(stream.refCnt()).as("every read released").isEqualTo(1);
        }
        stream.release();
    }

    @Test
    void aBadLengthAfterAKeptUnitFailsTheConnectionAndReleasesWhatItHeld() {
        List<InboundMessage> got = new ArrayList<>();
        EmbeddedChannel channel = channel(got);
        ByteBuf good = frameWithPrefix(7, 100);
        ByteBuf first = good.readRetainedSlice(50);
        ByteBuf rest = Unpooled.buffer().writeBytes(good).writeBytes(new byte[] {0x7f, -1, -1, -1, 0});
        channel.writeInbound(first);
        assertThatThrownBy(() -> channel.writeInbound(rest))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR));
        assertThat(got).extracting(InboundMessage::id).containsExactly(7L);
        assertThat(rest.refCnt()).isZero();
        channel.finishAndReleaseAll();
        assertThat(good.refCnt()).isEqualTo(1);
        good.release();
    }

    @Test
    void aCorruptLongUnitKeptFromItsFirstBytesFailsOnceAndReleasesEveryRead() {
        List<InboundMessage> got = new ArrayList<>();
        EmbeddedChannel channel = channel(got);
        ByteBuf frame = frameWithPrefix(9, UnitReader.MERGE_LIMIT + 1000);
        frame.setByte(frame.readerIndex() + 4, 0x7e); // an unknown frame version
        ByteBuf first = frame.readRetainedSlice(3); // too short to tell the unit's length
        ByteBuf rest = frame.readRetainedSlice(frame.readableBytes());
        channel.writeInbound(first);
        assertThatThrownBy(() -> channel.writeInbound(rest))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR));
        channel.finishAndReleaseAll();
        assertThat(got).isEmpty();
        assertThat(frame.refCnt()).isEqualTo(1);
        frame.release();
    }

    @Test
    void anOversizedUnitIsRefusedAsSoonAsItsLengthIsRead() {
        EmbeddedChannel channel = channel(new ArrayList<>());
        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {0x7f, -1, -1, -1})))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR));
        channel.finishAndReleaseAll();
    }

    /** Before an accepted connection's first message: small units only, no chunks; afterwards, anything. */
    @Test
    void beforeTheFirstMessageOnlySmallWholeFramesPass() {
        for (ByteBuf hostile : List.of(Chunks.header(ByteBufAllocator.DEFAULT, 1, 254 << 20, 1).writeByte(0),
                frameWithPrefix(7, UnitReader.HANDSHAKE_UNIT_LIMIT + 1))) {
            List<InboundMessage> got = new ArrayList<>();
            int[] over = {0};
            EmbeddedChannel channel = new EmbeddedChannel(new UnitReader(new FrameAssembler(MAX,
                    new LargeBufferPool(32L << 20, new MemoryPressure(false))), Chunks.CHUNK_BYTES + Chunks.OVERHEAD, got::add, offer -> { }, () -> over[0]++));
            assertThatThrownBy(() -> channel.writeInbound(hostile)).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
                assertThat(e).hasMessageContaining("before the connection's first message");
            });
            assertThat(got).isEmpty();
            assertThat(over[0]).isZero();
            channel.finishAndReleaseAll();
        }
        List<InboundMessage> got = new ArrayList<>();
        int[] over = {0};
        EmbeddedChannel channel = new EmbeddedChannel(new UnitReader(new FrameAssembler(MAX,
                new LargeBufferPool(32L << 20, new MemoryPressure(false))), Chunks.CHUNK_BYTES + Chunks.OVERHEAD, got::add, offer -> { }, () -> over[0]++));
        channel.writeInbound(frameWithPrefix(1, 30)); // the HELLO: small
        assertThat(over[0]).isOne();
        ByteBuf large = Unpooled.buffer();
        byte[] chunked = frameBytes(2, Chunks.CHUNK_BYTES + 5);
        for (int at = 0; at < chunked.length; ) {
            at = writeChunk(large, 0, chunked, at);
        }
        channel.writeInbound(large);
        channel.writeInbound(frameWithPrefix(3, UnitReader.HANDSHAKE_UNIT_LIMIT + 1));
        assertThat(got).extracting(InboundMessage::id).containsExactly(1L, 2L, 3L);
        assertThat(over[0]).as("once").isOne();
        channel.finishAndReleaseAll();
    }

    /**
     * A peer in the middle of a frame that sends less than a megabyte of it, or finishes none, for two
     * looks in a row is closed (half a frame, a byte every 100 ms); an idle one and a slow large one are not.
     */
    @Test
    void aStalledFrameClosesItsConnectionAnIdleOrSlowOneDoesNot() {
        Duration period = Duration.ofSeconds(30);
        // idle: between frames for ten periods
        Watched idle = watched(period);
        idle.channel.writeInbound(frameWithPrefix(1, 10));
        idle.pass(period.multipliedBy(10));
        assertThat(idle.failure).isNull();
        // half a frame, then nothing
        Watched half = watched(period);
        ByteBuf frame = frameWithPrefix(2, 5_000);
        half.channel.writeInbound(frame.readRetainedSlice(2_000));
        half.pass(period.multipliedBy(2));
        assertThat(half.failure).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
            assertThat(e).hasMessageContaining("stalled in the middle of a frame");
        });
        frame.release();
        // a byte every 100 ms
        Watched trickle = watched(period);
        ByteBuf slow = frameWithPrefix(3, 5_000);
        for (int tick = 0; tick < 2 * period.toMillis() / 100 && trickle.failure == null; tick++) {
            trickle.channel.writeInbound(slow.readRetainedSlice(1));
            trickle.pass(Duration.ofMillis(100));
        }
        assertThat(trickle.failure).as("a trickle").isNotNull();
        slow.release();
        // a large frame at 2 MiB a period: slow, not stalled
        Watched large = watched(period);
        ByteBuf chunks = Unpooled.buffer();
        byte[] big = frameBytes(4, 8 * Chunks.CHUNK_BYTES);
        for (int at = 0; at < big.length; ) {
            at = writeChunk(chunks, 0, big, at);
        }
        while (chunks.isReadable()) {
            large.channel.writeInbound(chunks.readRetainedSlice(Math.min(chunks.readableBytes(), 2 << 20)));
            large.pass(period);
        }
        chunks.release();
        assertThat(large.failure).isNull();
        assertThat(large.got).extracting(InboundMessage::id).containsExactly(4L);
        for (Watched watched : List.of(idle, half, trickle, large)) {
            watched.channel.finishAndReleaseAll();
        }
    }

    /** A channel with a reader and its stall watch, on frozen time. */
    private static final class Watched {
        final List<InboundMessage> got = new ArrayList<>();
        final EmbeddedChannel channel;
        Throwable failure;

        Watched(Duration period) {
            UnitReader units = new UnitReader(new FrameAssembler(MAX, new LargeBufferPool(64L << 20, new MemoryPressure(false))),
                    Chunks.CHUNK_BYTES + Chunks.OVERHEAD, got::add, offer -> { });
            channel = new EmbeddedChannel(units, new io.netty.channel.ChannelInboundHandlerAdapter() {
                @Override
                public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                    failure = cause;
                    ctx.close();
                }
            });
            channel.freezeTime();
            StallWatch.start(channel, units, period);
        }

        void pass(Duration time) {
            channel.advanceTimeBy(time.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
            channel.runScheduledPendingTasks();
        }
    }

    private static Watched watched(Duration period) {
        return new Watched(period);
    }

    private static List<InboundMessage> feed(ByteBuf stream, SplittableRandom random) {
        List<InboundMessage> got = new ArrayList<>();
        EmbeddedChannel channel = channel(got);
        while (stream.isReadable()) {
            int n = Math.min(stream.readableBytes(), 1 + random.nextInt(random.nextBoolean() ? 20 : 300_000));
            channel.writeInbound(stream.readRetainedSlice(n));
        }
        assertThat(channel.finishAndReleaseAll()).isFalse();
        return got;
    }

    private static EmbeddedChannel channel(List<InboundMessage> got) {
        FrameAssembler assembler = new FrameAssembler(MAX, new LargeBufferPool(32L << 20, new MemoryPressure(false)));
        return new EmbeddedChannel(new UnitReader(assembler, Chunks.CHUNK_BYTES + Chunks.OVERHEAD, got::add, offer -> { }));
    }
}
