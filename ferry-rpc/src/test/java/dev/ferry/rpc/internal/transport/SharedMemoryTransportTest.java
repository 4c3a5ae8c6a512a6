package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.testing.Eventually;

import dev.ferry.rpc.internal.wire.Delivery;


import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.serial.ClassPolicy;
import dev.ferry.rpc.internal.serial.ObjectCodec;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.internal.wire.MessageKind;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.internal.wire.SharedBuffers;
import dev.ferry.rpc.spi.CallHeaders;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shared-memory channel between transports on one host: large buffers go through it both ways
 * and arrive intact, ranges come back and are reused, a full segment falls back to the socket, a bad
 * descriptor closes only its connection, and no segment file outlives its transport.
 */
@Timeout(60)
class SharedMemoryTransportTest {
    private static final Path SHM = Path.of("/dev/shm");
    private static final int MIB = 1 << 20;

    private final ObjectCodec codec = new ObjectCodec(new ClassPolicy(List.of("dev.ferry")), List.of(), 64 * 1024);
    private final List<Transport> transports = new ArrayList<>();
    private final List<Throwable> sendFailures = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void needsEpollAndShm() {
        assumeTrue(Epoll.isAvailable() && Files.isDirectory(SHM), "Unix sockets (epoll) and /dev/shm");
    }

    @AfterEach
    void close() {
        transports.forEach(Transport::close);
        assertThat(sendFailures).isEmpty();
    }

    @Test
    void largeBuffersGoThroughSharedMemoryBothWaysAndArriveIntact() throws Exception {
        Pair pair = pair(64L * MIB, true);
        ByteBuffer direct = pattern(ByteBuffer.allocateDirect(3 * MIB + 5).order(ByteOrder.LITTLE_ENDIAN), 7);
        float[] floats = new float[MIB / 4 + 3];
        for (int i = 0; i < floats.length; i++) {
            floats[i] = i * 0.5f;
        }
        pair.toServer.send(call(2, List.of("args", direct, floats, new byte[1000])), Delivery.UNORDERED, sendFailures::add);
        InboundMessage received = pair.serverEvents.message();
        List<?> args = (List<?>) codec.decode(received.inBand(), received.outOfBand());
        ByteBuffer got = (ByteBuffer) args.get(1);
        assertThat(got.isDirect()).isTrue();
        assertThat(got.order()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
        assertThat(got).isEqualTo(direct.duplicate().order(ByteOrder.LITTLE_ENDIAN));
        assertThat((float[]) args.get(2)).isEqualTo(floats);
        assertThat(pair.client.sharedMemory().sentBuffers.sum()).isEqualTo(2);
        assertThat(pair.server.sharedMemory().receivedBuffers.sum()).isEqualTo(2);

        // The server echoes the view it received: it goes back through the server's own segment.
        pair.accepted.send(new OutboundMessage(MessageKind.REPLY, 2, CallHeaders.empty(), codec.encode(got)), Delivery.UNORDERED,
                sendFailures::add);
        ByteBuffer echoed = (ByteBuffer) decode(pair.clientEvents.message());
        assertThat(echoed).isEqualTo(direct.duplicate().order(ByteOrder.LITTLE_ENDIAN));
        assertThat(pair.server.sharedMemory().sentBuffers.sum()).isEqualTo(1);
        assertThat(pair.client.sharedMemory().receivedBuffers.sum()).isEqualTo(1);
        assertThat(pair.client.sharedMemory().fallbacks.sum()).isZero();
        assertThat(pair.client.debugInfo()).containsEntry("transport.shm.sent_buffers", "2");
    }

    @Test
    void rangesComeBackAndAreReused() throws Exception {
        // Room for three 1 MiB buffers at once; eight go through it one after the other.
        Pair pair = pair(4L * MIB, false);
        SharedMemory clientShm = pair.client.sharedMemory();
        for (int i = 0; i < 8; i++) {
            ByteBuffer sent = pattern(ByteBuffer.allocateDirect(MIB), i);
            pair.toServer.send(call(10 + i, sent), Delivery.UNORDERED, sendFailures::add);
            assertThat(decode(pair.serverEvents.message())).isEqualTo(sent.clear());
            awaitLent(clientShm, 0);
        }
        assertThat(clientShm.sentBuffers.sum()).isEqualTo(8);
        assertThat(clientShm.fallbacks.sum()).isZero();
        assertThat(pair.server.sharedMemory().releasesSent.sum()).isEqualTo(8);
    }

    /**
     * A view the application releases ({@code ReceivedBuffers}) gives its range back at once, with
     * no collection (the view is still reachable here), and fails every access after; an echo that
     * releases its argument after sending it gives the argument's range back once the reply is out.
     */
    @Test
    void releasedViewsGiveTheirRangesBackWithoutACollection() throws Exception {
        // Room for three 1 MiB buffers at once; eight go through it one after the other.
        Pair pair = pair(4L * MIB, false);
        SharedMemory clientShm = pair.client.sharedMemory();
        SharedMemory serverShm = pair.server.sharedMemory();
        for (int i = 0; i < 8; i++) {
            ByteBuffer sent = pattern(ByteBuffer.allocateDirect(MIB), i);
            pair.toServer.send(call(10 + i, sent), Delivery.UNORDERED, sendFailures::add);
            ByteBuffer got = (ByteBuffer) decode(pair.serverEvents.message());
            assertThat(got).isEqualTo(sent.clear());
            if (i % 2 == 0) {
                assertThat(dev.ferry.rpc.ReceivedBuffers.release(got)).isTrue();
                assertThat(dev.ferry.rpc.ReceivedBuffers.release(got)).as("released twice").isFalse();
                assertThatThrownBy(() -> got.get(0)).isInstanceOf(IllegalStateException.class);
            } else {
                // An echo done with its argument once the reply is written.
                pair.accepted.send(new OutboundMessage(MessageKind.REPLY, 10 + i, CallHeaders.empty(),
                        codec.encode(dev.ferry.rpc.ReceivedBuffers.releaseAfterSend(got))), Delivery.UNORDERED,
                        sendFailures::add);
                ByteBuffer echoed = (ByteBuffer) decode(pair.clientEvents.message());
                assertThat(echoed).isEqualTo(sent.clear());
                assertThat(dev.ferry.rpc.ReceivedBuffers.release(echoed)).isTrue();
                Eventually.until("the echo's range is back", () -> serverShm.own().lentBytes() == 0);
            }
            Eventually.until("the range is back", () -> clientShm.own().lentBytes() == 0);
        }
        assertThat(clientShm.sentBuffers.sum()).isEqualTo(8);
        assertThat(clientShm.fallbacks.sum()).isZero();
        assertThat(serverShm.fallbacks.sum()).isZero();
        assertThat(serverShm.debugInfo()).containsEntry("transport.shm.collections", "0");
    }

    @Test
    void manyEchoesWithCollectionsKeepEveryRangeAccountedFor() throws Exception {
        Pair pair = pair(24L * MIB, true);
        ByteBuffer sent = pattern(ByteBuffer.allocateDirect(4 * MIB), 9);
        for (int i = 0; i < 60; i++) { // a collection every few echoes: ~20 of them
            pair.toServer.send(call(100 + i, sent), Delivery.UNORDERED, sendFailures::add);
            Object got = decode(pair.serverEvents.message());
            pair.accepted.send(new OutboundMessage(MessageKind.REPLY, 100 + i, CallHeaders.empty(), codec.encode(got)), Delivery.UNORDERED,
                    sendFailures::add);
            assertThat(decode(pair.clientEvents.message())).isEqualTo(sent);
        }
        assertThat(pair.toServer.isActive()).isTrue();
        assertThat(pair.serverEvents.closed).isEmpty();
        assertThat(pair.clientEvents.closed).isEmpty();
    }

    @Test
    void aPeerThatSendsAndClosesAtOnceHasEverythingDelivered() throws Exception {
        Pair pair = pair(8L * MIB, true);
        for (int round = 0; round < 40; round++) {
            // The server answers each announcement, maybe after the client closed: that failed write
            // must not close the server's side before it read the client's messages.
            PeerChannel toServer = pair.client.connect(pair.serverAddress).get(10, TimeUnit.SECONDS);
            pair.serverEvents.accepted();
            for (int i = 0; i < 50; i++) {
                toServer.send(call(i, "m" + i), Delivery.UNORDERED, sendFailures::add);
            }
            toServer.close();
            for (int i = 0; i < 50; i++) {
                assertThat(pair.serverEvents.message().id()).as("round %d", round).isEqualTo(i);
            }
            assertThat(pair.serverEvents.closedCause()).isInstanceOf(IllegalStateException.class); // no cause
        }
    }

    @Test
    void aSenderAboutToTouchFreshMemoryWithMuchLentAsksThePeerToCollect() throws Exception {
        Pair pair = pair(128L * MIB, true);
        List<Object> held = new ArrayList<>(); // nothing comes back while the application holds it all
        int count = (int) (SharedMemory.PRESSURE_LENT_BYTES / (MIB + SharedSegment.GRANULE)) + 2;
        for (int i = 0; i < count; i++) {
            pair.toServer.send(call(200 + i, pattern(ByteBuffer.allocateDirect(MIB), i)), Delivery.UNORDERED, sendFailures::add);
            held.add(decode(pair.serverEvents.message()));
        }
        assertThat(pair.client.sharedMemory().pressuresSent.sum()).isEqualTo(1);
        assertThat(pair.client.sharedMemory().fallbacks.sum()).isZero();
        Eventually.until("the receiver asks for a collection",
                () -> !pair.server.sharedMemory().debugInfo().get("transport.shm.collections").equals("0"));
        assertThat(held).hasSize(count);
    }

    @Test
    void rangesLentOnClosedConnectionsComeBackWhenThePeerReconnects() throws Exception {
        // Room for one round's two 3 MiB buffers. The server keeps its views until after each
        // connection closed, so every range is lent on a closed connection; the server gives it back
        // on its next connection to the client. Without that, the second round falls back.
        Pair pair = pair(8L * MIB, false);
        pair.toServer.close();
        pair.serverEvents.closedCause();
        pair.clientEvents.closedCause();
        SharedMemory clientShm = pair.client.sharedMemory();
        SharedMemory serverShm = pair.server.sharedMemory();
        ByteBuffer sent = pattern(ByteBuffer.allocateDirect(3 * MIB), 5);
        List<ByteBuffer> pending = new ArrayList<>(); // views released once the next connection is open
        int rounds = 8; // both parities, several times
        for (int round = 0; round < rounds; round++) {
            PeerChannel toServer = pair.client.connect(pair.serverAddress).get(10, TimeUnit.SECONDS);
            PeerChannel accepted = pair.serverEvents.accepted();
            toServer.send(call(1, "ping"), Delivery.UNORDERED, sendFailures::add);
            pair.serverEvents.message();
            accepted.send(new OutboundMessage(MessageKind.REPLY, 1, CallHeaders.empty(), codec.encode("pong")), Delivery.UNORDERED,
                    sendFailures::add);
            pair.clientEvents.message(); // the server accepted the client's segment: the client sends through it
            pending.forEach(dev.ferry.rpc.ReceivedBuffers::release); // through the connection open now
            pending.clear();
            Eventually.until("what the last round lent came back over this connection",
                    () -> clientShm.own().lentBytes() == 0);
            assertThat(clientShm.own().orphanedBytes()).isZero();

            List<ByteBuffer> held = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                toServer.send(call(10 + i, sent), Delivery.UNORDERED, sendFailures::add);
                held.add((ByteBuffer) decode(pair.serverEvents.message()));
            }
            assertThat(held).as("round %d", round).containsOnly(sent);
            assertThat(toServer.kind()).isEqualTo("uds+shm");
            toServer.close();
            pair.serverEvents.closedCause();
            pair.clientEvents.closedCause();
            assertThat(clientShm.own().orphanedBytes()).as("lent on the closed connection")
                    .isGreaterThanOrEqualTo(6L * MIB).isEqualTo(clientShm.own().lentBytes());
            if (round % 2 == 0) {
                // Released with no connection to the client: the server keeps the releases for the next.
                held.forEach(dev.ferry.rpc.ReceivedBuffers::release);
                assertThat(serverShm.releasesKept()).isEqualTo(2);
            } else {
                pending.addAll(held);
            }
        }
        assertThat(clientShm.sentBuffers.sum()).isEqualTo(2L * rounds);
        assertThat(clientShm.fallbacks.sum()).isZero();
        assertThat(pair.client.debugInfo()).containsEntry("transport.shm.fallbacks", "0");
    }

    @Test
    void aFullSegmentFallsBackToTheSocketAndLosesNothing() throws Exception {
        Pair pair = pair(2L * MIB, false);
        List<ByteBuffer> held = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ByteBuffer sent = pattern(ByteBuffer.allocateDirect(MIB), 100 + i);
            pair.toServer.send(call(20 + i, sent), Delivery.UNORDERED, sendFailures::add);
            ByteBuffer got = (ByteBuffer) decode(pair.serverEvents.message());
            assertThat(got).isEqualTo(sent.clear());
            held.add(got); // the application keeps every view: nothing comes back
        }
        SharedMemory clientShm = pair.client.sharedMemory();
        assertThat(clientShm.sentBuffers.sum()).isEqualTo(1);
        assertThat(clientShm.fallbacks.sum()).isEqualTo(3);
        assertThat(held).hasSize(4);
    }

    @Test
    void aDescriptorOutsideTheSegmentClosesOnlyItsConnection() throws Exception {
        Pair pair = pair(8L * MIB, true);
        String socket = NettyTransport.PeerAddress.parse(pair.serverAddress).socket();
        SharedSegment fake = SharedSegment.create(SHM, 2L * MIB);
        try (SocketChannel raw = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            raw.connect(UnixDomainSocketAddress.of(socket));
            write(raw, announce(fake.announced(), fake.token(), fake.size()));
            assertThat(awaitAnswer(raw)).isEqualTo(SharedMemoryLink.ACCEPT);
            ByteBuffer frame = ByteBuffer.allocate(4 + 1 + 1 + 2 + 8 + 4 + 2 + 4 + 4 + 4 + SharedBuffers.DESCRIPTOR_BYTES);
            frame.putInt(frame.capacity() - 4).put((byte) 1).put((byte) MessageKind.CALL.code()).putShort((short) 0)
                    .putLong(99).putInt(2).putShort((short) 0).putInt(0).putInt(1)
                    .putInt(SharedBuffers.DESCRIPTOR).put((byte) 0).putLong(fake.size() - 100).putInt(MIB);
            write(raw, frame.flip());
            Throwable cause = pair.serverEvents.closedCause();
            assertThat(cause).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
                assertThat(e.getMessage()).contains("outside the peer's");
            });
        } finally {
            fake.close();
        }
        // The other connection still carries large buffers through shared memory.
        ByteBuffer sent = pattern(ByteBuffer.allocateDirect(MIB), 3);
        pair.toServer.send(call(30, sent), Delivery.UNORDERED, sendFailures::add);
        assertThat(decode(pair.serverEvents.message())).isEqualTo(sent.clear());
        assertThat(pair.serverEvents.messages).isEmpty();
    }

    @Test
    void anAnnouncementThatDoesNotCheckOutIsRefusedAndTheConnectionGoesOn() throws Exception {
        Pair pair = pair(8L * MIB, true);
        String socket = NettyTransport.PeerAddress.parse(pair.serverAddress).socket();
        SharedSegment fake = SharedSegment.create(SHM, 2L * MIB);
        try (SocketChannel raw = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            raw.connect(UnixDomainSocketAddress.of(socket));
            write(raw, announce(fake.announced(), fake.token() + 1, fake.size())); // not the file's token
            assertThat(awaitAnswer(raw)).isEqualTo(SharedMemoryLink.REFUSE);
            write(raw, announce("/etc/passwd", 1, 4096));
            // Only one announcement per connection is looked at; the second is a protocol error only
            // if the first was accepted, so this one is refused as well.
            assertThat(awaitAnswer(raw)).isEqualTo(SharedMemoryLink.REFUSE);
            ByteBuffer frame = ByteBuffer.allocate(4 + 1 + 1 + 2 + 8 + 4 + 2 + 4 + 4);
            frame.putInt(frame.capacity() - 4).put((byte) 1).put((byte) MessageKind.CALL.code()).putShort((short) 0)
                    .putLong(77).putInt(2).putShort((short) 0).putInt(0).putInt(0);
            write(raw, frame.flip());
            assertThat(pair.serverEvents.message().id()).isEqualTo(77);
        } finally {
            fake.close();
        }
    }

    @Test
    void aPeerWithoutSharedMemoryIgnoresTheOfferAndBothUseTheSocket() throws Exception {
        RecordingListener serverEvents = new RecordingListener();
        RecordingListener clientEvents = new RecordingListener();
        NettyTransport server = transport(0, true);
        String address = server.start(serverEvents);
        NettyTransport client = transport(8L * MIB, true);
        client.start(clientEvents);
        PeerChannel toServer = client.connect(address).get(10, TimeUnit.SECONDS);
        PeerChannel accepted = serverEvents.accepted();
        toServer.send(TestMessages.hello(), Delivery.ORDERED, sendFailures::add); // a large frame may not be the first
        for (int i = 0; i < 2; i++) {
            ByteBuffer sent = pattern(ByteBuffer.allocateDirect(2 * MIB), i);
            toServer.send(call(50 + i, sent), Delivery.UNORDERED, sendFailures::add);
            assertThat(decode(serverEvents.message())).isEqualTo(sent.clear());
            accepted.send(new OutboundMessage(MessageKind.REPLY, 50 + i, CallHeaders.empty(), codec.encode(sent)), Delivery.UNORDERED,
                    sendFailures::add);
            assertThat(decode(clientEvents.message())).isEqualTo(sent.clear());
        }
        assertThat(client.sharedMemory().sentBuffers.sum()).isZero();
        assertThat(toServer.kind()).isEqualTo("uds");
        assertThat(toServer.isActive()).isTrue();
    }

    @Test
    void noSegmentFileOutlivesItsTransportEvenIfKilled() throws Exception {
        Pair pair = pair(8L * MIB, true);
        SharedSegment segment = pair.client.sharedMemory().own();
        // Unlinked at once (peers open it through the descriptor), so even a killed worker leaves nothing.
        assertThat(segment.announced()).matches("/proc/[0-9]+/fd/[0-9]+");
        assertThat(segment.path()).doesNotExist();
        assertThat(Files.getPosixFilePermissions(Path.of(segment.announced()))).containsExactlyInAnyOrder(
                java.nio.file.attribute.PosixFilePermission.OWNER_READ,
                java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
        Path serverFile = pair.server.sharedMemory().own().path();
        transports.forEach(Transport::close);
        transports.clear();
        assertThat(segment.path()).doesNotExist();
        assertThat(serverFile).doesNotExist();
    }

    // ---- helpers ----

    private record Pair(NettyTransport server, NettyTransport client, String serverAddress, PeerChannel toServer,
                        PeerChannel accepted, RecordingListener serverEvents, RecordingListener clientEvents) {
    }

    /** Two transports, connected, with shared memory negotiated both ways (one round trip does that). */
    private Pair pair(long segmentBytes, boolean collect) throws Exception {
        RecordingListener serverEvents = new RecordingListener();
        RecordingListener clientEvents = new RecordingListener();
        NettyTransport server = transport(segmentBytes, collect);
        String address = server.start(serverEvents);
        NettyTransport client = transport(segmentBytes, collect);
        client.start(clientEvents);
        PeerChannel toServer = client.connect(address).get(10, TimeUnit.SECONDS);
        PeerChannel accepted = serverEvents.accepted();
        toServer.send(call(1, "ping"), Delivery.UNORDERED, sendFailures::add);
        serverEvents.message();
        accepted.send(new OutboundMessage(MessageKind.REPLY, 1, CallHeaders.empty(), codec.encode("pong")), Delivery.UNORDERED,
                sendFailures::add);
        clientEvents.message();
        // Each side processed the other's announcement before the message that followed it.
        assertThat(toServer.kind()).isEqualTo("uds+shm");
        assertThat(accepted.kind()).isEqualTo("uds+shm");
        return new Pair(server, client, address, toServer, accepted, serverEvents, clientEvents);
    }

    /** Over a Unix socket, with a shared-memory segment of {@code segmentBytes} (0: none). */
    private NettyTransport transport(long segmentBytes, boolean collect) {
        ThreadFactory threads = task -> {
            Thread thread = new Thread(task, "shm-test-io");
            thread.setDaemon(true);
            return thread;
        };
        NettyTransport transport = new NettyTransport(TestOptions.tcp(64L * MIB, t -> t.withUnixSockets(true)
                .withSharedMemoryBytes(segmentBytes).withMemoryCollections(collect)).build(), TestOptions.threads(threads));
        transports.add(transport);
        return transport;
    }

    private OutboundMessage call(long id, Object value) {
        return new OutboundMessage(MessageKind.CALL, id, CallHeaders.empty(), codec.encode(value));
    }

    private Object decode(InboundMessage message) {
        return codec.decode(message.inBand(), message.outOfBand());
    }

    private static ByteBuffer pattern(ByteBuffer buffer, int seed) {
        for (int i = 0; buffer.hasRemaining(); i++) {
            buffer.put((byte) (i * 31 + seed));
        }
        return buffer.flip();
    }

    /**
     * Bounded: the receiver's collector finds the dropped views within a few collections, and the
     * JDK's reference handler thread hands them over (which needs the CPU: a loaded machine gets a
     * millisecond between collections).
     */
    private static void awaitLent(SharedMemory shm, long bytes) {
        collectUntil("ranges released", () -> shm.own().lentBytes() <= bytes);
    }

    private static void collectUntil(String what, java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what + " within 20 s").isLessThan(deadline);
            System.gc();
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private static ByteBuffer announce(String announced, long token, long size) {
        byte[] path = announced.getBytes(StandardCharsets.UTF_8);
        ByteBuffer unit = ByteBuffer.allocate(4 + 2 + 8 + 8 + 2 + path.length);
        unit.putInt(unit.capacity() - 4).put((byte) SharedBuffers.CONTROL).put((byte) SharedMemoryLink.ANNOUNCE)
                .putLong(token).putLong(size).putShort((short) path.length).put(path);
        return unit.flip();
    }

    private static void write(SocketChannel channel, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    /** Reads units until the server answers an announcement (its own announcement comes first): the answer's type. */
    private static int awaitAnswer(SocketChannel channel) throws IOException {
        while (true) {
            ByteBuffer length = read(channel, 4);
            ByteBuffer unit = read(channel, length.getInt());
            if ((unit.get(0) & 0xFF) == SharedBuffers.CONTROL
                    && (unit.get(1) == SharedMemoryLink.ACCEPT || unit.get(1) == SharedMemoryLink.REFUSE)) {
                return unit.get(1);
            }
        }
    }

    private static ByteBuffer read(SocketChannel channel, int n) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate(n);
        while (bytes.hasRemaining()) {
            if (channel.read(bytes) < 0) {
                throw new IOException("closed");
            }
        }
        return bytes.flip();
    }
}
