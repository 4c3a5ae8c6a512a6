package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.serial.EncodedPayload;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Large messages spread over bulk connections: they arrive intact both ways, small messages pass
 * them, a failing bulk connection fails only what was in flight on it, and ordered messages keep
 * their place.
 */
@Timeout(120)
class NettyBulkConnectionsTest {
    private static final int MIB = 1 << 20;
    private static final int CONNECTIONS = 3;
    private final NettyTransports transports = new NettyTransports("bulk-test");

    @AfterEach
    void close() {
        transports.close();
    }

    @Test
    void largeMessagesSpreadOverSeveralConnectionsArriveIntactBothWays() throws Exception {
        Pair pair = connectedWithLanes();
        int[] sizes = {4 * MIB, 4 * MIB + 1, 9 * MIB + 123, 40 * MIB};
        for (int i = 0; i < sizes.length; i++) {
            byte[] body = randomBytes(sizes[i], i);
            pair.client.send(message(10 + i, body, CallHeaders.empty()), e -> { });
            InboundMessage received = pair.server.message();
            assertThat(received.id()).isEqualTo(10 + i);
            assertThat(bytesOf(received.inBand())).isEqualTo(body);
        }
        assertThat(NettyTransport.bulkOf(pair.client).spreadSent()).isEqualTo(sizes.length);
        assertThat(NettyTransport.bulkOf(pair.accepted).spreadReceived()).isEqualTo(sizes.length);

        // The other way: the accepting side spreads over the connections the opener opened.
        byte[] reply = randomBytes(24 * MIB + 7, 99);
        pair.accepted.send(message(50, reply, CallHeaders.empty()), e -> { });
        InboundMessage back = pair.clientEvents.message();
        assertThat(back.id()).isEqualTo(50);
        assertThat(bytesOf(back.inBand())).isEqualTo(reply);
        assertThat(NettyTransport.bulkOf(pair.accepted).spreadSent()).isEqualTo(1);
    }

    @Test
    void aSmallMessageCompletesWhileA128MiBTransferIsInFlight() throws Exception {
        Pair pair = connectedWithLanes();
        byte[] large = randomBytes(128 * MIB, 3);
        // The receiver's bulk connections read nothing until the small message is through, so the
        // large one is certainly in flight (its parts on them cannot arrive).
        setLanesReading(pair.accepted, false);
        pair.client.send(message(1, large, CallHeaders.empty()), e -> { });
        pair.client.send(message(2, new byte[16], CallHeaders.empty()), e -> { });
        assertThat(pair.server.message().id()).isEqualTo(2);
        assertThat(pair.server.messages).isEmpty();
        setLanesReading(pair.accepted, true);
        InboundMessage received = pair.server.message();
        assertThat(received.id()).isEqualTo(1);
        assertThat(bytesOf(received.inBand())).isEqualTo(large);
    }

    @Test
    void killingOneBulkConnectionFailsOnlyTheMessageInFlightOnIt() throws Exception {
        Pair pair = connectedWithLanes();
        BulkGroup clientBulk = NettyTransport.bulkOf(pair.client);
        List<BulkGroup.Lane> clientLanes = clientBulk.activeLanes();
        assertThat(clientLanes).hasSize(CONNECTIONS - 1);
        setLanesReading(pair.accepted, false);
        CompletableFuture<Throwable> failed = new CompletableFuture<>();
        pair.client.send(message(1, new byte[128 * MIB], CallHeaders.empty()), failed::complete);
        // Its parts are handed to the connections (it is in flight on each) before one is killed.
        until("the message is spread", () -> clientBulk.unackedCount() == 1);
        BulkGroup.Lane victim = NettyTransport.bulkOf(pair.accepted).activeLanes().get(0);
        victim.channel.close();

        Throwable cause = failed.get(20, TimeUnit.SECONDS);
        assertThat(cause).hasMessageContaining("bulk connection " + victim.index)
                .hasMessageContaining("in flight on it");
        // The main connection and the other bulk connection survive.
        setLanesReading(pair.accepted, true);
        assertThat(pair.client.isActive()).isTrue();
        assertThat(clientLanes.stream().filter(lane -> lane.index != victim.index)
                .allMatch(lane -> lane.channel.isActive())).isTrue();
        pair.client.send(message(2, new byte[16], CallHeaders.empty()), e -> { });
        assertThat(pair.server.message().id()).isEqualTo(2);
        // A later large message goes through (over what is left, or reopened connections).
        byte[] later = randomBytes(32 * MIB, 5);
        pair.client.send(message(3, later, CallHeaders.empty()), e -> { });
        InboundMessage received = pair.server.message();
        assertThat(received.id()).as("the failed message is never delivered").isEqualTo(3);
        assertThat(bytesOf(received.inBand())).isEqualTo(later);
        assertThat(pair.server.messages).isEmpty();
    }

    @Test
    void anOrderedMessageNeverOvertakesASpreadMessageSentBeforeIt() throws Exception {
        Pair pair = connectedWithLanes();
        CallHeaders ordered = CallHeaders.empty().with(HeaderKey.ofString("rref"), "x");
        int rounds = 12;
        for (int i = 0; i < rounds; i++) {
            pair.client.send(message(2 * i, new byte[6 * MIB + i], CallHeaders.empty()), e -> { });
            pair.client.send(message(2 * i + 1, new byte[8], ordered), e -> { });
        }
        List<Long> order = new ArrayList<>();
        for (int i = 0; i < 2 * rounds; i++) {
            order.add(pair.server.message().id());
        }
        for (int i = 0; i < rounds; i++) {
            assertThat(order.indexOf(2L * i)).as("spread message %d before the ordered one sent after it", 2 * i)
                    .isLessThan(order.indexOf(2L * i + 1));
        }
        // Ordered messages keep their own order.
        List<Long> orderedIds = order.stream().filter(id -> id % 2 == 1).toList();
        assertThat(orderedIds).isSorted();
    }

    @Test
    void withoutBulkConnectionsOnTheAcceptingSideLargeMessagesUseTheMainConnection() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(1), server);
        RecordingListener clientEvents = new RecordingListener();
        Connection client = transports.connect(settings(CONNECTIONS), clientEvents, address);
        byte[] body = randomBytes(12 * MIB, 8);
        for (int i = 0; i < 3; i++) {
            client.send(message(i, body, CallHeaders.empty()), e -> { });
            assertThat(bytesOf(server.message().inBand())).isEqualTo(body);
        }
        assertThat(NettyTransport.bulkOf(client).spreadSent()).isZero();
        assertThat(NettyTransport.bulkOf(client).activeLanes()).isEmpty();
    }

    @Test
    void withoutBulkConnectionsOnTheOpeningSideOffersAreIgnored() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(CONNECTIONS), server);
        Connection client = transports.connect(settings(1), new RecordingListener(), address);
        byte[] body = randomBytes(12 * MIB, 9);
        for (int i = 0; i < 3; i++) {
            client.send(message(i, body, CallHeaders.empty()), e -> { });
            assertThat(bytesOf(server.message().inBand())).isEqualTo(body);
        }
        assertThat(client.isActive()).isTrue();
        assertThat(NettyTransport.bulkOf(client)).isNull();
    }

    /** A client connected to a server, both with bulk connections, the lanes open. */
    @Test
    void aLargeMessageSpreadJustBeforeACloseArrivesBeforeTheClose() throws Exception {
        Pair pair = connectedWithLanes();
        byte[] large = randomBytes(64 * MIB, 5);
        // The receiver's bulk connections read nothing until the close was asked for: the parts on
        // them are still in flight (mostly queued at the sender) when it is.
        setLanesReading(pair.accepted, false);
        pair.client.send(message(1, large, CallHeaders.empty()), e -> { });
        pair.client.close();
        setLanesReading(pair.accepted, true);
        InboundMessage received = pair.server.message();
        assertThat(received.id()).isEqualTo(1);
        assertThat(bytesOf(received.inBand())).isEqualTo(large);
        assertThat(pair.server.closedCause()).isInstanceOf(IllegalStateException.class); // orderly
    }

    private Pair connectedWithLanes() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(CONNECTIONS), server);
        RecordingListener clientEvents = new RecordingListener();
        Connection client = transports.connect(settings(CONNECTIONS), clientEvents, address);
        Connection accepted = server.accepted.poll(10, TimeUnit.SECONDS);
        assertThat(accepted).isNotNull();
        // The first large message opens the lanes (it goes over the main connection itself).
        client.send(message(0, new byte[8 * MIB], CallHeaders.empty()), e -> { });
        assertThat(server.message().id()).isZero();
        NettyTransport.bulkOf(client).allLanesUp().get(10, TimeUnit.SECONDS);
        BulkGroup acceptedBulk = NettyTransport.bulkOf(accepted);
        // The accepting side knows a lane once its hello is read: wait for a message sent behind them.
        client.send(message(0, new byte[8 * MIB], CallHeaders.empty()), e -> { });
        assertThat(server.message().id()).isZero();
        assertThat(acceptedBulk.activeLanes()).hasSize(CONNECTIONS - 1);
        NettyTransport.bulkOf(client).resetCounters();
        acceptedBulk.resetCounters();
        return new Pair(client, accepted, server, clientEvents);
    }

    private record Pair(Connection client, Connection accepted, RecordingListener server, RecordingListener clientEvents) {
    }

    private static void until(String what, java.util.function.BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("within 30 s: " + what).isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private static void setLanesReading(Connection connection, boolean reading) {
        for (BulkGroup.Lane lane : NettyTransport.bulkOf(connection).activeLanes()) {
            lane.channel.config().setAutoRead(reading);
        }
    }

    private static NettyTransport.Settings settings(int bulkConnections) {
        return NettyTransport.Settings.tcp("127.0.0.1", 1, 1 << 30).withBulkConnections(bulkConnections);
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < size; i += 8) {
            long value = random.nextLong();
            for (int j = 0; j < 8 && i + j < size; j++) {
                bytes[i + j] = (byte) (value >>> (8 * j));
            }
        }
        return bytes;
    }

    private static byte[] bytesOf(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    private static OutboundMessage message(long id, byte[] body, CallHeaders headers) {
        return new OutboundMessage(MessageKind.CALL, id, headers, new EncodedPayload(body, List.of()));
    }
}
