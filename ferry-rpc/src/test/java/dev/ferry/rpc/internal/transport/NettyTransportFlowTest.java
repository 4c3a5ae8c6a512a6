package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;

import dev.ferry.rpc.RpcBackendOptions;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.Chunks;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.ferry.rpc.RpcException;

import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What only the Netty transport does: large messages in chunks that smaller ones may overtake,
 * ordered messages that never overtake, and the choice between a Unix socket and TCP.
 */
@Timeout(60)
class NettyTransportFlowTest {
    private static final int LARGE = 64 << 20;
    private final NettyTransports transports = new NettyTransports("flow-test");

    @AfterEach
    void close() {
        transports.close();
    }

    @Test
    void aSmallMessageOvertakesALargeOneSentBeforeIt() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(false), server);
        PeerChannel client = transports.connect(settings(false), new RecordingListener(), address);
        PeerChannel accepted = server.accepted.poll(10, TimeUnit.SECONDS);
        // The receiver reads nothing until both are queued, so the order cannot depend on timing:
        // far more than the socket and channel buffers hold of the large one is still queued.
        accepted.pauseReading(true);
        client.send(message(1, new byte[LARGE], CallHeaders.empty()), Delivery.UNORDERED, e -> { });
        client.send(message(2, new byte[10], CallHeaders.empty()), Delivery.UNORDERED, e -> { });
        accepted.pauseReading(false);
        assertSmallOvertookLarge(server);
    }

    @Test
    void aLargeMessageToAPeerThatStopsReadingKeepsTheChannelWritableAndAtMostTwoChunksInIt() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(false), server);
        NettyConnection client = (NettyConnection) transports.connect(settings(false), new RecordingListener(), address);
        PeerChannel accepted = server.accepted();
        AtomicInteger writabilityChanges = new AtomicInteger();
        client.channel().pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                writabilityChanges.incrementAndGet();
            }
        });
        accepted.pauseReading(true);
        client.send(message(1, new byte[LARGE], CallHeaders.empty()), Delivery.UNORDERED, e -> { });
        // The kernel's buffers fill up: the channel then holds chunks it cannot write yet.
        long pending;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((pending = onLoop(client, () -> client.channel().unsafe().outboundBuffer().totalPendingWriteBytes())) == 0) {
            assertThat(System.nanoTime()).as("bytes pending in the channel within 10 s").isLessThan(deadline);
            Thread.onSpinWait();
        }
        // (Netty counts ~100 bytes per write on top of its bytes.)
        assertThat(pending).isLessThanOrEqualTo(OutboundQueue.MAX_CHUNKS_IN_CHANNEL * (long) Chunks.CHUNK_BYTES + 4096);
        assertThat(onLoop(client, () -> client.outbound().chunksInChannel())).isEqualTo(OutboundQueue.MAX_CHUNKS_IN_CHANNEL);
        assertThat(onLoop(client, () -> client.channel().isWritable())).isTrue();
        // A small message is not held back by the chunks' limit.
        client.send(message(2, new byte[10], CallHeaders.empty()), Delivery.UNORDERED, e -> { });
        accepted.pauseReading(false);
        assertSmallOvertookLarge(server);
        assertThat(onLoop(client, () -> client.outbound().chunksInChannel())).isZero();
        assertThat(writabilityChanges).as("the channel never became unwritable").hasValue(0);
    }

    /** Message 2 (small) arrived before message 1 (large), which arrived whole. */
    private static void assertSmallOvertookLarge(RecordingListener server) throws InterruptedException {
        assertThat(server.message().id()).isEqualTo(2);
        InboundMessage large = server.message();
        assertThat(large.id()).isEqualTo(1);
        assertThat(large.inBand().remaining()).isEqualTo(LARGE);
    }

    private static <T> T onLoop(NettyConnection connection, Callable<T> task) throws Exception {
        return connection.channel().eventLoop().submit(task).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aMessageWithHeadersNeverOvertakes() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(false), server);
        PeerChannel client = transports.connect(settings(false), new RecordingListener(), address);
        PeerChannel accepted = server.accepted.poll(10, TimeUnit.SECONDS);
        accepted.pauseReading(true);
        client.send(message(1, new byte[LARGE], CallHeaders.empty()), Delivery.UNORDERED, e -> { });
        client.send(message(2, new byte[10], CallHeaders.empty().with(HeaderKey.ofString("rref"), "x")), Delivery.ORDERED, e -> { });
        accepted.pauseReading(false);
        assertThat(server.message().id()).isEqualTo(1);
        assertThat(server.message().id()).isEqualTo(2);
    }

    @Test
    void manyLargeMessagesInterleavedArriveIntact() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(false), server);
        PeerChannel client = transports.connect(settings(false), new RecordingListener(), address);
        int count = 3 * OutboundQueue.MAX_ACTIVE_LARGE;
        for (int i = 0; i < count; i++) {
            byte[] body = new byte[Chunks.CHUNK_BYTES * 2 + i];
            body[body.length - 1] = (byte) i;
            client.send(message(i, body, CallHeaders.empty()), Delivery.UNORDERED, e -> { });
        }
        boolean[] seen = new boolean[count];
        for (int i = 0; i < count; i++) {
            InboundMessage received = server.message();
            int id = (int) received.id();
            assertThat(received.inBand().remaining()).isEqualTo(Chunks.CHUNK_BYTES * 2 + id);
            assertThat(received.inBand().get(received.inBand().limit() - 1)).isEqualTo((byte) id);
            seen[id] = true;
        }
        assertThat(seen).containsOnly(true);
    }

    @Test
    void aCloseGivesUpOnAPeerThatStopsReadingAndFailsWhatItCouldNotWrite() throws Exception {
        for (boolean unixSockets : Epoll.isAvailable() ? new boolean[] {false, true} : new boolean[] {false}) {
            RecordingListener server = new RecordingListener();
            String address = transports.listen(settings(unixSockets), server);
            RecordingListener events = new RecordingListener();
            PeerChannel client = transports.connect(TestOptions.tcp(1 << 30,
                    t -> t.withUnixSockets(unixSockets).withCloseTimeout(Duration.ofMillis(300))).build(),
                    events, address);
            server.accepted().pauseReading(true);
            // Far more than the socket buffers and the channel's water mark hold: most stays queued.
            BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();
            for (int i = 0; i < 16; i++) {
                client.send(message(i, new byte[4 << 20], CallHeaders.empty()), Delivery.UNORDERED, failures::add);
            }
            client.close();
            Throwable cause = events.closedCause();
            assertThat(cause).as(client.kind()).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT);
                assertThat(e.getMessage()).contains("closing the connection", "timed out", "did not read");
            });
            assertThat(failures.poll(30, TimeUnit.SECONDS)).as("a send that could not be written").isSameAs(cause);
            assertThat(client.isActive()).isFalse();
        }
    }

    @Test
    void anAbortFailsWhatWasNotWrittenWithItsCauseAndClosesBothEnds() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(false), server);
        RecordingListener events = new RecordingListener();
        PeerChannel client = transports.connect(settings(false), events, address);
        PeerChannel accepted = server.accepted();
        accepted.pauseReading(true);
        BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();
        for (int i = 0; i < 16; i++) {
            client.send(message(i, new byte[4 << 20], CallHeaders.empty()), Delivery.UNORDERED, failures::add);
        }
        RpcException cause = new RpcException(RpcException.Code.SHUTDOWN, "shutting down now");
        client.abort(cause);
        assertThat(events.closedCause()).isSameAs(cause);
        assertThat(failures.poll(30, TimeUnit.SECONDS)).as("a send that was not written").isSameAs(cause);
        assertThat(failures).allSatisfy(failure -> assertThat(failure).isSameAs(cause));
        // (Behind what the kernel still buffers for it: the peer sees the end once it reads again.)
        accepted.pauseReading(false);
        assertThat(server.closedCause()).as("the peer sees the connection end").isNotNull();
        CompletableFuture<Throwable> late = new CompletableFuture<>();
        client.send(message(99, new byte[10], CallHeaders.empty()), Delivery.UNORDERED, late::complete);
        assertThat(late.get(10, TimeUnit.SECONDS)).isNotNull();
    }

    @Test
    void whatAPeerSentBeforeItsConnectionResetIsDeliveredEvenWithWritesPending() throws Exception {
        // A peer killed (or closing abortively) with our data unread resets the connection; our
        // pending writes then fail. That must not close our side before it read what the peer sent.
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(false), server);
        int port = NettyTransport.PeerAddress.parse(address).port();
        for (int round = 0; round < 5; round++) {
            try (java.net.Socket raw = new java.net.Socket("127.0.0.1", port)) {
                PeerChannel accepted = server.accepted();
                accepted.pauseReading(true);
                // Far more than the socket buffers hold: the server keeps writing while the peer reads nothing.
                accepted.send(message(1, new byte[32 << 20], CallHeaders.empty()), Delivery.UNORDERED, e -> { });
                // The server's first bytes arrived, so it paused reading before the call below.
                assertThat(raw.getInputStream().readNBytes(4)).hasSize(4);
                java.nio.ByteBuffer frame = java.nio.ByteBuffer.allocate(4 + 1 + 1 + 2 + 8 + 4 + 2 + 4 + 4);
                frame.putInt(frame.capacity() - 4).put((byte) 1).put((byte) MessageKind.CALL.code())
                        .putShort((short) 0).putLong(77).putInt(2).putShort((short) 0).putInt(0).putInt(0);
                raw.getOutputStream().write(frame.array());
                raw.getOutputStream().flush();
                raw.setSoLinger(true, 0); // close with a reset
                raw.close();
                accepted.pauseReading(false);
                assertThat(server.message().id()).as("round %d", round).isEqualTo(77);
                assertThat(server.closedCause()).isNotNull();
            }
        }
    }

    @Test
    void peersOnThisHostUseTheUnixSocketWhichIsDeletedAtClose() throws Exception {
        assumeTrue(Epoll.isAvailable());
        RecordingListener server = new RecordingListener();
        NettyTransport transport = transports.start(settings(true));
        String address = transport.start(server);
        Path socket = Path.of(NettyTransport.PeerAddress.parse(address).socket());
        assertThat(socket).exists();
        PeerChannel client = transports.connect(settings(true), new RecordingListener(), address);
        assertThat(client.kind()).isEqualTo("uds");
        transport.close();
        assertThat(socket).doesNotExist();
        assertThat(socket.getParent()).doesNotExist();
    }

    @Test
    void peersOnAnotherHostOrWithUnixSocketsOffUseTcp() throws Exception {
        String address = transports.listen(settings(true), new RecordingListener());
        RpcBackendOptions elsewhere = TestOptions.tcp(1 << 30,
                t -> t.withUnixSockets(true).withHostId("another-host/boot")).build();
        assertThat(transports.connect(elsewhere, new RecordingListener(), address).kind()).isEqualTo("tcp");
        assertThat(transports.connect(settings(false), new RecordingListener(), address).kind()).isEqualTo("tcp");
    }

    @Test
    void aStaleSocketFallsBackToTcp() throws Exception {
        assumeTrue(Epoll.isAvailable());
        String address = transports.listen(settings(false), new RecordingListener());
        Path missing = Files.createTempDirectory("ferry-test-").resolve("gone.sock");
        String stale = address + ";uds=" + missing + ";hostid=" + HostIdentity.local();
        assertThat(transports.connect(settings(true), new RecordingListener(), stale).kind()).isEqualTo("tcp");
        Files.delete(missing.getParent());
    }

    private static RpcBackendOptions settings(boolean unixSockets) {
        return TestOptions.tcp(1 << 30, t -> t.withUnixSockets(unixSockets)).build();
    }

    private static OutboundMessage message(long id, byte[] body, CallHeaders headers) {
        return new OutboundMessage(MessageKind.CALL, id, headers, new EncodedPayload(body, List.of()));
    }
}
