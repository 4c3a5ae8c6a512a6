package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;

import dev.ferry.rpc.RpcBackendOptions;

import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.testing.Eventually;
import dev.ferry.rpc.testing.TestCertificates;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.ferry.rpc.internal.transport.TestMessages.message;
import static dev.ferry.rpc.internal.transport.TestMessages.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Senders that write their own frames ({@link DirectWriter}) over real sockets: while the event loop
 * writes too, when the socket fills in the middle of a frame, and when the connection closes under
 * them. The receiver checks every frame whole and each sender's order.
 */
@Timeout(60)
class DirectWriterTest {
    /** What the agent sends when the peer waits for this message alone: senders may write it themselves. */
    private static final Delivery ALONE = Delivery.of(false, true);
    private static final long MAX_FRAME = 16L << 20;

    private static RpcBackendOptions.Builder settings(String kind) {
        return switch (kind) {
            case "uds" -> TestOptions.tcp(MAX_FRAME, t -> t.withUnixSockets(true));
            case "auth" -> TestOptions.tcp(MAX_FRAME).authToken(NettyAuthenticatedTransportTest.TOKEN);
            default -> TestOptions.tcp(MAX_FRAME);
        };
    }

    private static void assumeDirectWrites() {
        assumeThat(Epoll.isAvailable() && DirectWriter.AVAILABLE).as("native epoll and JDK 22+ native access").isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "uds", "auth"})
    void sendersAndTheEventLoopWritingTogetherLoseNothingAndKeepEachSendersOrder(String kind) throws Exception {
        assumeDirectWrites();
        try (NettyTransports transports = new NettyTransports("direct-test")) {
            RecordingListener server = new RecordingListener();
            NettyConnection toServer = connect(transports, settings(kind), server, new RecordingListener());
            assertThat(toServer.directWriter()).isNotNull();
            int senders = 6;
            int each = 400;
            ExecutorService pool = Executors.newFixedThreadPool(senders);
            try {
                for (int s = 0; s < senders; s++) {
                    int sender = s;
                    pool.execute(() -> {
                        for (int i = 0; i < each; i++) {
                            long id = sender * 1_000_000L + i;
                            // Every fourth frame of sender 0 is sent by the event loop, in the same order.
                            if (sender == 0 && i % 4 == 0) {
                                toServer.channel().eventLoop().execute(() -> toServer.send(message(id, body(id)), ALONE, e -> { }));
                            } else {
                                toServer.send(message(id, body(id)), ALONE, e -> { });
                            }
                        }
                    });
                }
                long[] next = new long[senders];
                List<Long> loopOrder = new ArrayList<>();
                for (int n = 0; n < senders * each; n++) {
                    InboundMessage received = server.message();
                    long id = received.id();
                    int sender = (int) (id / 1_000_000);
                    assertThat(TestMessages.bytesOf(received.inBand())).as("frame %d", id).isEqualTo(body(id));
                    if (sender == 0 && id % 4 == 0) {
                        loopOrder.add(id);
                    } else if (sender != 0) {
                        assertThat(id % 1_000_000).as("sender %d's order", sender).isEqualTo(next[sender]);
                        next[sender]++;
                    }
                }
                assertThat(loopOrder).isSorted().hasSize(each / 4);
                // A sender whose last frame has arrived may still hold the socket (it releases it
                // after its write returned): wait until every sender is done.
                pool.shutdown();
                assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("senders done within 10 s").isTrue();
                // One at a time, nothing queued ahead: the sender writes each frame itself. (The loop
                // takes a frame off Netty's buffer after its write returns, which the server may
                // have read by then: wait until the connection is quiet before each.)
                long before = transports.directWrites();
                for (long id = 9_000_000; id < 9_000_020; id++) {
                    awaitQuiet(toServer);
                    toServer.send(message(id, body(id)), ALONE, e -> { });
                    assertThat(server.message().id()).isEqualTo(id);
                }
                assertThat(transports.directWrites() - before).as("frames written by their senders").isEqualTo(20);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "uds"})
    void aFrameTheSocketTakesOnlyInPartIsFinishedBeforeAnythingElse(String kind) throws Exception {
        assumeDirectWrites();
        try (NettyTransports transports = new NettyTransports("direct-test")) {
            RecordingListener server = new RecordingListener();
            NettyConnection toServer = connect(transports, settings(kind), server, new RecordingListener());
            PeerChannel accepted = server.accepted();
            DirectWriter writer = toServer.directWriter();
            long id = 0;
            // Pause the reader and send until a sender's write is cut short by the full socket (if
            // the socket happens to fill exactly at a frame's end, the next frame is queued whole:
            // read everything and try again).
            for (int attempt = 0; attempt < 20 && writer.partialWrites() == 0; attempt++) {
                accepted.pauseReading(true);
                long first = id;
                while (writer.partialWrites() == 0 && toServer.outbound().queuedBytes() == 0 && id - first < 2_000) {
                    toServer.send(message(id, body(id, 150_001)), ALONE, e -> { });
                    id++;
                }
                // What the loop still writes now, and everything after, goes behind the partial frame.
                for (int i = 0; i < 5; i++, id++) {
                    toServer.send(message(id, body(id, 150_001)), ALONE, e -> { });
                }
                accepted.pauseReading(false);
                for (long expected = first; expected < id; expected++) {
                    InboundMessage received = server.message();
                    assertThat(received.id()).isEqualTo(expected);
                    assertThat(TestMessages.bytesOf(received.inBand())).as("frame %d", expected)
                            .isEqualTo(body(expected, 150_001));
                }
            }
            assertThat(writer.partialWrites()).as("frames the socket took in part").isPositive();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "uds"})
    void aConnectionClosedUnderWritingSendersDeliversWholeFramesOnlyAndClosesItsDuplicate(String kind) throws Exception {
        assumeDirectWrites();
        long descriptorsBefore = openDescriptors();
        try (NettyTransports transports = new NettyTransports("direct-test")) {
            RecordingListener server = new RecordingListener();
            RecordingListener clientEvents = new RecordingListener();
            NettyConnection toServer = connect(transports, settings(kind), server, clientEvents);
            server.accepted();
            int senders = 4;
            CountDownLatch started = new CountDownLatch(senders);
            ExecutorService pool = Executors.newFixedThreadPool(senders);
            try {
                for (int s = 0; s < senders; s++) {
                    int sender = s;
                    pool.execute(() -> {
                        started.countDown();
                        // Until the close: a fixed count could all be sent through the event loop
                        // before any sender found the queue empty and wrote itself (seen at load ~6).
                        for (long i = 0; toServer.isActive(); i++) {
                            long id = sender * 1_000_000_000_000L + i;
                            toServer.send(message(id, body(id, 3_000)), ALONE, e -> { });
                        }
                    });
                }
                started.await(10, TimeUnit.SECONDS);
                // Wait until frames flow and senders write some themselves, then close under them.
                InboundMessage first = server.message();
                assertThat(TestMessages.bytesOf(first.inBand())).isEqualTo(body(first.id(), 3_000));
                while (transports.directWrites() == 0) {
                    assertThat(server.message()).isNotNull();
                }
                toServer.abort(new IOException("closed under its senders by the test"));
                clientEvents.closedCause();
                pool.shutdown();
                assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
                // Whatever arrived before the close is whole.
                InboundMessage received;
                while ((received = server.messages.poll()) != null) {
                    assertThat(TestMessages.bytesOf(received.inBand())).as("frame %d", received.id())
                            .isEqualTo(body(received.id(), 3_000));
                }
                assertThat(toServer.directWriter().descriptorClosed()).isTrue();
            } finally {
                pool.shutdownNow();
            }
        }
        if (descriptorsBefore >= 0) {
            assertThat(openDescriptors()).as("open descriptors after the transports closed")
                    .isLessThanOrEqualTo(descriptorsBefore + 2);
        }
    }

    @Test
    void overTlsTheLoopWritesEverything(@TempDir Path dir) throws Exception {
        assumeDirectWrites();
        RpcBackendOptions.Builder settings = settings("tcp")
                .tls(TestCertificates.context(TestCertificates.keyStore(dir, "direct")));
        try (NettyTransports transports = new NettyTransports("direct-test")) {
            RecordingListener server = new RecordingListener();
            NettyConnection toServer = connect(transports, settings, server, new RecordingListener());
            assertThat(toServer.directWriter()).as("the socket carries ciphertext").isNull();
            for (long id = 0; id < 10; id++) {
                toServer.send(message(id, body(id)), ALONE, e -> { });
                assertThat(server.message().id()).isEqualTo(id);
            }
            assertThat(transports.directWrites()).isZero();
        }
    }

    /** Waits (bounded) until nothing is queued on {@code connection} and Netty's buffer is empty. */
    private static void awaitQuiet(NettyConnection connection) {
        Eventually.until("the connection goes quiet", () -> connection.outbound().queuedBytes() == 0
                && connection.channel().unsafe().outboundBuffer().totalPendingWriteBytes() == 0);
    }

    /** A server transport reporting to {@code server}, and a client's connection to it. */
    private static NettyConnection connect(NettyTransports transports, RpcBackendOptions.Builder settings,
                                           RecordingListener server, RecordingListener client) throws Exception {
        String address = transports.listen(settings.build(), server);
        return (NettyConnection) transports.connect(settings.build(), client, address);
    }

    private static byte[] body(long id) {
        return body(id, 16 + (int) (id % 200));
    }

    private static byte[] body(long id, int size) {
        byte[] bytes = randomBytes(size);
        for (int i = 0; i < 8; i++) {
            bytes[i] = (byte) (id >>> (8 * i));
        }
        return bytes;
    }

    /** This process's open file descriptors, or -1 where they cannot be listed. */
    private static long openDescriptors() {
        try (Stream<Path> entries = Files.list(Path.of("/proc/self/fd"))) {
            return entries.count();
        } catch (IOException e) {
            return -1;
        }
    }
}
