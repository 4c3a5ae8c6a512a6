package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.ClassPolicy;
import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The contract every {@link Transport} keeps (grpc's {@code AbstractTransportTest}): subclasses
 * only say how to make one. What the agent relies on is here: accepted connections are reported
 * before their messages, messages of one connection arrive in order and as sent, a close is
 * reported on both sides after what was sent before it, and a send on a closed connection fails.
 */
@Timeout(60)
public abstract class AbstractTransportTest {
    protected static final long MAX_FRAME_BYTES = 16L << 20;
    private static final HeaderKey<String> TAG = HeaderKey.ofString("tag");

    private final List<Transport> transports = new ArrayList<>();
    private final Map<Transport, String> addresses = new HashMap<>();
    private final List<Throwable> sendFailures = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ObjectCodec outOfBandCodec = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(), 64 * 1024);
    private Recorder serverEvents;
    private Recorder clientEvents;
    private Transport server;
    private Transport client;
    private String serverAddress;

    /** A new, unstarted transport. */
    protected abstract Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads);

    /** An address nothing listens on. */
    protected abstract String unreachableAddress() throws Exception;

    /** What {@link PeerChannel#kind()} reports for this transport's connections. */
    protected abstract String expectedKind();

    @BeforeEach
    void startTransports() {
        serverEvents = new Recorder();
        clientEvents = new Recorder();
        server = start("server", serverEvents);
        client = start("client", clientEvents);
        serverAddress = addresses.get(server);
    }

    private Transport start(String name, Recorder events) {
        return start(name, events, MAX_FRAME_BYTES);
    }

    private Transport start(String name, Recorder events, long maxFrameBytes) {
        ThreadFactory threads = task -> {
            Thread thread = new Thread(task, "transport-test-" + name);
            thread.setDaemon(true);
            return thread;
        };
        Transport transport = newTransport(name, maxFrameBytes, threads);
        transports.add(transport);
        addresses.put(transport, transport.start(events));
        return transport;
    }

    @AfterEach
    void closeTransports() {
        transports.forEach(Transport::close);
        assertThat(sendFailures).as("sends reported as failed").isEmpty();
    }

    @Test
    void connectReportsAcceptedAndMessagesGoBothWays() throws Exception {
        PeerChannel toServer = connect();
        PeerChannel accepted = serverEvents.accepted();
        toServer.send(new OutboundMessage(MessageKind.CALL, 7, CallHeaders.empty().with(TAG, "h1"), payload("ping")), Delivery.ORDERED,
                failed());
        InboundMessage ping = serverEvents.message();
        assertThat(ping.kind()).isEqualTo(MessageKind.CALL);
        assertThat(ping.id()).isEqualTo(7);
        assertThat(ping.headers().get(TAG)).isEqualTo("h1");
        assertThat(text(ping)).isEqualTo("ping");
        assertThat(serverEvents.lastConnection).isSameAs(accepted);

        accepted.attach("the client");
        accepted.send(new OutboundMessage(MessageKind.REPLY, 7, CallHeaders.empty(), payload("pong")), Delivery.UNORDERED, failed());
        InboundMessage pong = clientEvents.message();
        assertThat(pong.kind()).isEqualTo(MessageKind.REPLY);
        assertThat(text(pong)).isEqualTo("pong");
        assertThat(clientEvents.lastConnection).isSameAs(toServer);
        assertThat(accepted.attachment()).isEqualTo("the client");
        assertThat(toServer.isActive()).isTrue();
        assertThat(accepted.isActive()).isTrue();
        assertThat(toServer.kind()).isEqualTo(expectedKind());
        assertThat(accepted.kind()).isEqualTo(expectedKind());
    }

    @Test
    void aTransportCanConnectToItself() throws Exception {
        PeerChannel self = client.connect(addresses.get(client)).get(10, TimeUnit.SECONDS);
        clientEvents.accepted();
        self.send(message(1, "me"), Delivery.UNORDERED, failed());
        assertThat(text(clientEvents.message())).isEqualTo("me");
    }

    @Test
    void messagesOfOneConnectionArriveInOrder() throws Exception {
        PeerChannel toServer = connect();
        for (int i = 0; i < 2000; i++) {
            toServer.send(message(i, "m" + i), Delivery.UNORDERED, failed());
        }
        for (int i = 0; i < 2000; i++) {
            InboundMessage received = serverEvents.message();
            assertThat(received.id()).isEqualTo(i);
            assertThat(text(received)).isEqualTo("m" + i);
        }
    }

    @Test
    void concurrentSendersLoseNothingAndKeepEachSendersOrder() throws Exception {
        PeerChannel toServer = connect();
        int senders = 8;
        int each = 250;
        ExecutorService pool = Executors.newFixedThreadPool(senders);
        try {
            for (int s = 0; s < senders; s++) {
                int sender = s;
                pool.execute(() -> {
                    for (int i = 0; i < each; i++) {
                        toServer.send(message(sender * 1_000_000L + i, "s" + sender), Delivery.UNORDERED, failed());
                    }
                });
            }
            long[] next = new long[senders];
            for (int n = 0; n < senders * each; n++) {
                long id = serverEvents.message().id();
                int sender = (int) (id / 1_000_000);
                assertThat(id % 1_000_000).as("sender %d's order", sender).isEqualTo(next[sender]);
                next[sender]++;
            }
            assertThat(next).containsOnly(each);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void largeMessageWithOutOfBandBuffersArrivesIntact() throws Exception {
        ObjectCodec codec = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(), 64 * 1024);
        float[] big = new float[1 << 20];
        for (int i = 0; i < big.length; i++) {
            big[i] = i * 0.25f;
        }
        List<Object> value = List.of("head", big, new byte[300_000]);
        EncodedPayload payload = codec.encode(value);
        assertThat(payload.outOfBand()).hasSize(2);
        connect().send(new OutboundMessage(MessageKind.CALL, 1, CallHeaders.empty(), payload), Delivery.UNORDERED, failed());
        InboundMessage received = serverEvents.message();
        assertThat(received.outOfBand()).hasSize(2);
        List<?> back = (List<?>) codec.decode(received.inBand(), received.outOfBand());
        assertThat(back.get(0)).isEqualTo("head");
        assertThat((float[]) back.get(1)).isEqualTo(big);
        assertThat((byte[]) back.get(2)).hasSize(300_000);
    }

    @Test
    void oversizedMessageIsThrownAtTheSenderAndTheConnectionStaysUsable() throws Exception {
        PeerChannel toServer = connect();
        OutboundMessage huge = new OutboundMessage(MessageKind.CALL, 1, CallHeaders.empty(),
                new EncodedPayload(new byte[(int) MAX_FRAME_BYTES + 1], List.of()));
        assertThatThrownBy(() -> toServer.send(huge, Delivery.UNORDERED, failed())).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR));
        toServer.send(message(2, "after"), Delivery.UNORDERED, failed());
        assertThat(text(serverEvents.message())).isEqualTo("after");
    }

    @Test
    void aFrameOverTheReceiversLimitClosesTheConnection() throws Exception {
        Recorder strictEvents = new Recorder();
        Transport strict = start("strict", strictEvents, 4096);
        PeerChannel toStrict = client.connect(addresses.get(strict)).get(10, TimeUnit.SECONDS);
        PeerChannel accepted = strictEvents.accepted();
        toStrict.send(message(1, "x".repeat(10_000)), Delivery.UNORDERED, error -> { }); // within the sender's limit
        assertThat(strictEvents.closed()).isSameAs(accepted);
        assertThat(strictEvents.closedCause).isNotNull();
        assertThat(clientEvents.closed()).isSameAs(toStrict);
        assertThat(strictEvents.messages).isEmpty();
    }

    @Test
    void closeIsReportedOnBothSidesAfterWhatWasSentBeforeIt() throws Exception {
        PeerChannel toServer = connect();
        PeerChannel accepted = serverEvents.accepted();
        for (int i = 0; i < 100; i++) {
            toServer.send(message(i, "before close"), Delivery.UNORDERED, failed());
        }
        toServer.close();
        for (int i = 0; i < 100; i++) {
            assertThat(serverEvents.message().id()).isEqualTo(i);
        }
        assertThat(serverEvents.closed()).isSameAs(accepted);
        assertThat(serverEvents.closedCause).isNull();
        assertThat(clientEvents.closed()).isSameAs(toServer);
        assertThat(toServer.isActive()).isFalse();
        assertThat(accepted.isActive()).isFalse();
    }

    @Test
    void aPeerThatSendsAndClosesAtOnceHasEverythingDeliveredBeforeItsClose() throws Exception {
        // The server answers every message, as a worker answers calls: the client closes with
        // answers unread, and the server's answers to a client that has closed fail. Neither may
        // cost the server a message the client sent before it closed, nor turn the close abortive.
        serverEvents.echo = true;
        int count = 200;
        for (int round = 0; round < 30; round++) {
            PeerChannel toServer = connect();
            PeerChannel accepted = serverEvents.accepted();
            for (int i = 0; i < count; i++) {
                // Some large ones (in chunks over sockets, out-of-band through shared memory where it
                // is on) are still being written when close() runs.
                toServer.send(i % 100 == 99 ? message(i, "x".repeat(1_500_000))
                        : i % 100 == 49 ? new OutboundMessage(MessageKind.CALL, i, CallHeaders.empty(),
                                outOfBandCodec.encode(new byte[1_000_000]))
                        : message(i, "m" + i), Delivery.UNORDERED, failed());
            }
            toServer.close();
            // (Small messages may overtake a large one: every one arrives, not necessarily in order.)
            java.util.Set<Long> ids = new java.util.TreeSet<>();
            for (int i = 0; i < count; i++) {
                ids.add(serverEvents.message().id());
            }
            assertThat(ids).as("round %d", round).hasSize(count).first().isEqualTo(0L);
            assertThat(serverEvents.closed()).isSameAs(accepted);
            assertThat(serverEvents.closedCause).as("round %d: an orderly close", round).isNull();
            assertThat(serverEvents.readBefore(accepted)).as("messages read before the close").isEqualTo(count);
            assertThat(clientEvents.closed()).isSameAs(toServer);
            assertThat(clientEvents.closedCause).as("round %d: an orderly close", round).isNull();
            clientEvents.messages.clear(); // answers: the client may read some before its close, or none
        }
    }

    @Test
    void aPausedReceiverGetsEverythingSentBeforeTheCloseWhenItResumes() throws Exception {
        for (int round = 0; round < 10; round++) {
            PeerChannel toServer = connect();
            PeerChannel accepted = serverEvents.accepted();
            accepted.pauseReading(true);
            for (int i = 0; i < 100; i++) {
                toServer.send(message(i, "m" + i), Delivery.UNORDERED, failed());
            }
            toServer.close();
            accepted.pauseReading(false);
            for (int i = 0; i < 100; i++) {
                assertThat(serverEvents.message().id()).as("round %d", round).isEqualTo(i);
            }
            assertThat(serverEvents.closed()).isSameAs(accepted);
            assertThat(serverEvents.closedCause).isNull();
            assertThat(serverEvents.readBefore(accepted)).as("messages read before the close").isEqualTo(100);
            assertThat(clientEvents.closed()).isSameAs(toServer);
        }
    }

    @Test
    void anAbortClosesBothEndsAndReportsItsCauseHere() throws Exception {
        PeerChannel toServer = connect();
        PeerChannel accepted = serverEvents.accepted();
        toServer.send(message(1, "before"), Delivery.UNORDERED, failed());
        assertThat(serverEvents.message().id()).isEqualTo(1);
        RpcException cause = new RpcException(RpcException.Code.SHUTDOWN, "shutting down now");
        toServer.abort(cause);
        assertThat(clientEvents.closed()).isSameAs(toServer);
        assertThat(clientEvents.closedCause).isSameAs(cause);
        assertThat(serverEvents.closed()).isSameAs(accepted);
        assertThat(toServer.isActive()).isFalse();
        CompletableFuture<Throwable> late = new CompletableFuture<>();
        toServer.send(message(2, "too late"), Delivery.UNORDERED, late::complete);
        assertThat(late.get(10, TimeUnit.SECONDS)).isNotNull();
    }

    @Test
    void sendAfterCloseReportsAFailure() throws Exception {
        PeerChannel toServer = connect();
        toServer.close();
        clientEvents.closed();
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        toServer.send(message(1, "too late"), Delivery.UNORDERED, failure::complete);
        assertThat(failure.get(10, TimeUnit.SECONDS)).isNotNull();
        assertThat(toServer.isActive()).isFalse();
    }

    @Test
    void closingTheServerTransportClosesItsPeersConnections() throws Exception {
        PeerChannel toServer = connect();
        PeerChannel accepted = serverEvents.accepted();
        server.close();
        assertThat(clientEvents.closed()).isSameAs(toServer);
        assertThat(serverEvents.closed()).isSameAs(accepted);
        assertThat(client.connect(serverAddress)).failsWithin(15, TimeUnit.SECONDS);
    }

    @Test
    void connectingToAnAddressNobodyListensOnFails() throws Exception {
        assertThat(client.connect(unreachableAddress())).failsWithin(15, TimeUnit.SECONDS)
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(RpcException.class);
    }

    private PeerChannel connect() throws Exception {
        PeerChannel connection = client.connect(serverAddress).get(10, TimeUnit.SECONDS);
        // Introduced as the agent's connections are: an accepted connection takes large frames after that.
        connection.send(TestMessages.hello(), Delivery.ORDERED, error -> { });
        return connection;
    }

    private static OutboundMessage message(long id, String text) {
        return new OutboundMessage(MessageKind.CALL, id, CallHeaders.empty(), payload(text));
    }

    private static EncodedPayload payload(String text) {
        return new EncodedPayload(text.getBytes(StandardCharsets.UTF_8), List.of());
    }

    private static String text(InboundMessage message) {
        return StandardCharsets.UTF_8.decode(message.inBand().duplicate()).toString();
    }

    /** A failure callback for sends that must succeed; checked after each test. */
    private java.util.function.Consumer<Throwable> failed() {
        return sendFailures::add;
    }

    /** What a transport reported, in order; each wait is bounded. */
    private static final class Recorder implements TransportListener {
        private final BlockingQueue<PeerChannel> accepted = new LinkedBlockingQueue<>();
        private final BlockingQueue<InboundMessage> messages = new LinkedBlockingQueue<>();
        private final BlockingQueue<PeerChannel> closed = new LinkedBlockingQueue<>();
        private final Map<PeerChannel, Integer> read = new java.util.concurrent.ConcurrentHashMap<>();
        private final Map<PeerChannel, Integer> readBeforeClose = new java.util.concurrent.ConcurrentHashMap<>();
        private volatile PeerChannel lastConnection;
        private volatile Throwable closedCause;
        /** Answer every message with a small one (whose sending may fail: the peer may have closed). */
        private volatile boolean echo;

        @Override
        public void onAccepted(PeerChannel connection) {
            accepted.add(connection);
        }

        /** Calls are recorded as the other messages. */
        @Override
        public void onCall(PeerChannel connection, InboundMessage message, Responder responder) {
            onMessage(connection, message);
        }

        @Override
        public void onMessage(PeerChannel connection, InboundMessage message) {
            if (message.kind() == MessageKind.HELLO) {
                return; // a connection's introduction (connect()), not one of the tests' messages
            }
            lastConnection = connection;
            read.merge(connection, 1, Integer::sum);
            messages.add(message);
            if (echo) {
                connection.send(new OutboundMessage(MessageKind.REPLY, message.id(), CallHeaders.empty(),
                        payload("ack")), Delivery.UNORDERED, error -> { });
            }
        }

        @Override
        public void onClosed(PeerChannel connection, Throwable cause) {
            closedCause = cause;
            readBeforeClose.put(connection, read.getOrDefault(connection, 0));
            closed.add(connection);
        }

        /** How many messages {@code connection} reported before its close. */
        int readBefore(PeerChannel connection) {
            return readBeforeClose.get(connection);
        }

        PeerChannel accepted() throws InterruptedException {
            return take(accepted, "an accepted connection");
        }

        InboundMessage message() throws InterruptedException {
            return take(messages, "a message");
        }

        PeerChannel closed() throws InterruptedException {
            return take(closed, "a closed connection");
        }

        private static <T> T take(BlockingQueue<T> queue, String what) throws InterruptedException {
            T value = queue.poll(10, TimeUnit.SECONDS);
            if (value == null) {
                throw new AssertionError("no " + what + " within 10 s");
            }
            return value;
        }
    }
}
