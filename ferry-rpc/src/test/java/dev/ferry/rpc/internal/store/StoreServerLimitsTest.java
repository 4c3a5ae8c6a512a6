package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.internal.security.BlockingAuthExchange;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.testing.HostileSockets;
import dev.ferry.rpc.store.TcpStoreOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What strangers and stalled clients cost rank 0's store, attacked over real sockets: a claimed
 * length costs nothing before the handshake and only what arrives after it; handshakes that do not
 * finish in time are closed, a bounded number at once, whatever trickles in; a frame that stalls is
 * closed. After each attack a real client still uses the store. The figures are printed for the record.
 */
@Timeout(90)
class StoreServerLimitsTest {
    private static final String TOKEN = "a-token-of-the-group-0123456789";
    private static final PeerAuthentication AUTH = PeerAuthentication.of(TOKEN, Duration.ofSeconds(10));
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final long MIB = 1 << 20;

    private static long heapAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static Socket connect(StoreServer server) throws IOException {
        Socket socket = new Socket("127.0.0.1", server.address().getPort());
        socket.setSoTimeout((int) BOUND.toMillis());
        return socket;
    }

    /** A frame header claiming {@code length} bytes after the length: what a hostile client sends first. */
    private static byte[] claim(int length, byte type) {
        return ByteBuffer.allocate(9).putInt(length).putInt(0).put(type).array();
    }

    private static void aRealClientStillWorks(StoreServer server, String token) {
        TcpStoreOptions.Builder options = TcpStoreOptions.builder().port(server.address().getPort())
                .timeout(Duration.ofSeconds(20));
        try (TcpStore client = TcpStore.create(token == null ? options.build() : options.authToken(token).build())) {
            client.set("after-the-attack", "fine".getBytes(StandardCharsets.UTF_8));
            assertThat(client.get("after-the-attack")).asString(StandardCharsets.UTF_8).isEqualTo("fine");
        }
    }

    @Test
    void helloClaimsCostNothingWithOrWithoutAToken() throws Exception {
        for (PeerAuthentication auth : new PeerAuthentication[] {AUTH, null}) {
            try (StoreServer server = StoreServer.start("127.0.0.1", 0, auth)) {
                long before = heapAfterGc();
                // ten 9-byte claims of 64 MiB took the store to OutOfMemoryError
                assertThat(HostileSockets.allClosedAfterSending(10, () -> connect(server),
                        i -> claim(64 << 20, StoreProtocol.OP_HELLO))).as("closed at once").isTrue();
                long grown = heapAfterGc() - before;
                System.out.printf("store, %s token: 10 HELLO claims of 64 MiB: heap %+.1f MiB, %d threads%n",
                        auth == null ? "without a" : "with a", grown / (double) MIB, server.liveThreads());
                assertThat(grown).as("heap grown by the claims").isLessThan(16 * MIB);
                aRealClientStillWorks(server, auth == null ? null : TOKEN);
            }
        }
    }

    @Test
    void anAuthenticatedClaimCostsWhatArrivesAndAStalledFrameIsClosed() throws Exception {
        ConnectionLimits limits = new ConnectionLimits(Duration.ofSeconds(10), Duration.ofMillis(400), 8);
        try (StoreServer server = StoreServer.start("127.0.0.1", 0, AUTH, null, limits)) {
            long before = heapAfterGc();
            List<Socket> members = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                Socket socket = connect(server);
                OutputStream out = socket.getOutputStream();
                out.write(FrameBuilder.start(0, StoreProtocol.OP_HELLO).putInt(StoreProtocol.MAGIC)
                        .putShort(StoreProtocol.VERSION).toByteArray());
                DataInputStream in = new DataInputStream(socket.getInputStream());
                Frame.read(in, StoreProtocol.MAX_FRAME_BYTES); // the HELLO reply
                BlockingAuthExchange.run(in, out, AUTH, false, "store");
                out.write(claim(60 << 20, StoreProtocol.OP_SET)); // then half a frame: a few bytes of 60 MiB
                out.write(new byte[100]);
                out.flush();
                members.add(socket);
            }
            long start = System.nanoTime();
            for (Socket socket : members) {
                assertThat(HostileSockets.closedByPeer(socket)).as("a stalled frame is closed").isTrue();
                socket.close();
            }
            long grown = heapAfterGc() - before;
            System.out.printf("store: 6 authenticated claims of 60 MiB, half sent: heap %+.1f MiB, closed after %d ms"
                    + " (stall bound 400 ms)%n", grown / (double) MIB, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            assertThat(grown).as("heap grown by the claims").isLessThan(16 * MIB);
            aRealClientStillWorks(server, TOKEN);
        }
    }

    /**
     * The store rank 0 serves for a group takes its handshake timeout from the options (the group's
     * {@code authTimeout}), with or without a token: sockets that send nothing hold no thread while
     * they wait, and are closed at that timeout, not before and not at a fixed 10 s.
     */
    @Test
    void silentSocketsHoldNoThreadAndAreClosedAtTheOptionsAuthTimeout() throws Exception {
        Duration authTimeout = Duration.ofMillis(800);
        int sockets = 40;
        for (String token : new String[] {TOKEN, null}) {
            TcpStoreOptions options = TcpStoreOptions.builder().port(0).server(true).authToken(token)
                    .authTimeout(authTimeout).timeout(Duration.ofSeconds(20)).build();
            try (TcpStore store = TcpStore.create(options)) {
                var server = store.server().orElseThrow();
                // the acceptor, and the reader of the store's own client (started as its HELLO's answer goes)
                await().atMost(BOUND).until(() -> server.activeConnections() == 1);
                int threadsBefore = server.liveThreads();
                long start = System.nanoTime();
                List<Socket> silent = new ArrayList<>();
                for (int i = 0; i < sockets; i++) {
                    Socket socket = new Socket("127.0.0.1", server.port());
                    socket.setSoTimeout((int) BOUND.toMillis());
                    silent.add(socket);
                }
                await().atMost(BOUND).until(() -> pending(store) == sockets);
                int threadsDuring = server.liveThreads();
                for (Socket socket : silent) {
                    assertThat(HostileSockets.closedByPeer(socket)).as("closed at the handshake deadline").isTrue();
                    socket.close();
                }
                long closedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                System.out.printf("store, %s token: %d silent sockets: %d threads before, %d while they waited;"
                        + " all closed after %d ms (authTimeout %d ms)%n", token == null ? "without a" : "with a",
                        sockets, threadsBefore, threadsDuring, closedAfter, authTimeout.toMillis());
                assertThat(threadsDuring).as("threads while %d sockets await their handshake", sockets)
                        .isEqualTo(threadsBefore);
                assertThat(closedAfter).as("closed at the options' authTimeout, not before, not at 10 s")
                        .isGreaterThanOrEqualTo(authTimeout.toMillis() - 50).isLessThan(5_000);
                await().atMost(BOUND).until(() -> pending(store) == 0);
                store.set("after", "fine".getBytes(StandardCharsets.UTF_8));
                assertThat(store.get("after")).asString(StandardCharsets.UTF_8).isEqualTo("fine");
            }
        }
    }

    private static int pending(TcpStore store) {
        return store.server().orElseThrow().pendingHandshakes();
    }

    @Test
    void silentAndTricklingHandshakesAreClosedInTimeAFewAtOnce() throws Exception {
        int slots = 8;
        ConnectionLimits limits = new ConnectionLimits(Duration.ofMillis(500), Duration.ofSeconds(30), slots);
        try (StoreServer server = StoreServer.start("127.0.0.1", 0, null, null, limits)) {
            // a HELLO a byte every 100 ms: each read comes in time, the handshake does not
            Socket trickler = connect(server);
            await().atMost(BOUND).until(() -> server.pendingHandshakes() == 1);
            byte[] hello = FrameBuilder.start(0, StoreProtocol.OP_HELLO).putInt(StoreProtocol.MAGIC)
                    .putShort(StoreProtocol.VERSION).toByteArray();
            HostileSockets.Trickle trickle = HostileSockets.trickle(trickler, hello, Duration.ofMillis(100));
            List<Socket> silent = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                silent.add(connect(server));
            }
            int mostPending = 0;
            int mostThreads = 0;
            List<Socket> all = new ArrayList<>(List.of(trickler));
            all.addAll(silent);
            for (Socket socket : all) {
                mostPending = Math.max(mostPending, server.pendingHandshakes());
                mostThreads = Math.max(mostThreads, server.liveThreads());
                assertThat(HostileSockets.closedByPeer(socket)).as("closed at the handshake deadline").isTrue();
                socket.close();
            }
            System.out.printf("store: 40 silent sockets and a trickle: at most %d handshakes pending, %d threads;"
                    + " the trickle had sent %d of %d HELLO bytes%n", mostPending, mostThreads, Math.min(trickle.sent(),
                    hello.length), hello.length);
            trickle.close();
            assertThat(mostPending).isLessThanOrEqualTo(slots);
            assertThat(mostThreads).as("the acceptor alone: a handshake holds no thread").isEqualTo(1);
            await().atMost(BOUND).until(() -> server.pendingHandshakes() == 0);
            aRealClientStillWorks(server, null);
        }
    }
}
