package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.testing.Eventually;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** TcpStore behaviour beyond the store contract: connecting, server lifecycle, bad clients, scale. */
@Timeout(30)
class TcpStoreTest {
    private static final String HOST = "127.0.0.1";
    private static final Duration LONG = Duration.ofSeconds(60);

    private final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable closeable : cleanup.reversed()) {
            closeable.close();
        }
    }

    private <T extends AutoCloseable> T track(T closeable) {
        cleanup.add(closeable);
        return closeable;
    }

    private TcpStoreServer startServer() {
        return track(TcpStoreServer.start(HOST, 0));
    }

    private TcpStore client(TcpStoreServer server) {
        return track(TcpStore.connect(HOST, server.port(), LONG));
    }

    /** A port that was free a moment ago: bound on port 0, then released. */
    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return probe.getLocalPort();
        }
    }

    @Test
    void clientsStartedBeforeTheServerConnectOnceItIsUp() throws Exception {
        int port = freePort();
        List<Background<TcpStore>> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(Background.start("early-client-" + i, () -> TcpStore.connect(HOST, port, LONG)));
        }
        // A connecting client is parked only in its retry backoff, i.e. after a refused attempt.
        for (Background<TcpStore> client : clients) {
            client.awaitBlocked();
        }

        TcpStoreServer server = track(TcpStoreServer.start(HOST, port));

        for (int i = 0; i < clients.size(); i++) {
            TcpStore store = track(clients.get(i).join());
            store.set("early/" + i, new byte[] {(byte) i});
        }
        assertThat(server.activeConnections()).isEqualTo(3);
        assertThat(client(server).check(List.of("early/0", "early/1", "early/2"))).isTrue();
    }

    @Test
    void connectGivesUpAfterTheTimeoutNamingTheAddress() throws Exception {
        int port = freePort();
        assertThatThrownBy(() -> TcpStore.connect(HOST, port, Duration.ofMillis(300)))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.RENDEZVOUS_FAILED);
                    assertThat(e.getMessage()).contains(HOST + ":" + port);
                });
    }

    @Test
    void aSecondServerOnABusyPortFailsWithAddressInUse() {
        TcpStoreServer first = startServer();
        assertThatThrownBy(() -> TcpStoreServer.start(HOST, first.port()))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.RENDEZVOUS_FAILED);
                    assertThat(e.getMessage()).contains("Address already in use").contains(HOST + ":" + first.port());
                });
        assertThat(first.isClosed()).isFalse();
        client(first).set("still", new byte[] {1});
    }

    @Test
    void createWithServerOwnsTheServer() {
        TcpStore master = TcpStore.create(TcpStoreOptions.builder().host(HOST).port(0).server(true)
                .timeout(LONG).build());
        TcpStoreServer server = master.server().orElseThrow();
        TcpStore worker = TcpStore.create(TcpStoreOptions.builder().host(HOST).port(server.port()).build());
        worker.set("hello", "from worker".getBytes(UTF_8));
        assertThat(master.get("hello")).isEqualTo("from worker".getBytes(UTF_8));
        assertThat(worker.server()).isEmpty();

        master.close();
        assertThat(server.isClosed()).isTrue();
        assertThat(server.liveThreads()).isZero();
        assertThatThrownBy(() -> worker.set("after", new byte[0])).isInstanceOf(RpcException.class);
        worker.close();
    }

    @Test
    void aBlockedGetParksOnTheServerWithoutHoldingUpTheConnection() throws Exception {
        TcpStoreServer server = startServer();
        TcpStore store = client(server);
        Background<byte[]> getter = Background.start("getter", () -> store.get("k", LONG)).awaitBlocked();
        Eventually.until("GET parked on the server", () -> server.parkedRequests() == 1);

        // Same client connection, other thread: not queued behind the parked GET.
        store.set("other", new byte[] {7});
        assertThat(store.get("other")).containsExactly(7);
        store.set("k", new byte[] {42});

        assertThat(getter.join()).containsExactly(42);
        assertThat(server.parkedRequests()).isZero();
    }

    @Test
    void anInterruptedGetIsCancelledOnTheServerAndTheConnectionSurvives() throws Exception {
        TcpStoreServer server = startServer();
        TcpStore store = client(server);
        CompletableFuture<RpcException> outcome = new CompletableFuture<>();
        // A virtual thread: interrupting one blocked in socket I/O would close the socket, so this
        // also checks that callers never block in socket I/O themselves.
        Thread caller = Thread.ofVirtual().start(() -> {
            try {
                store.get("never", Duration.ZERO);
                outcome.completeExceptionally(new AssertionError("get returned"));
            } catch (RpcException e) {
                outcome.complete(e);
            }
        });
        Eventually.until("GET parked on the server", () -> server.parkedRequests() == 1);

        caller.interrupt();

        RpcException e = outcome.get(10, TimeUnit.SECONDS);
        assertThat(e.getMessage()).contains("Interrupted");
        Eventually.until("server released the cancelled wait",
                () -> server.parkedRequests() == 0 && server.liveThreads() == 2);
        assertThat(store.isConnected()).isTrue();
        store.set("k", new byte[] {1});
        assertThat(store.get("k")).containsExactly(1);
    }

    @Test
    void closingTheServerWakesBlockedClientsWithShutdown() throws Exception {
        TcpStoreServer server = TcpStoreServer.start(HOST, 0);
        TcpStore store = client(server);
        Background<byte[]> getter = Background.start("getter", () -> store.get("never", Duration.ZERO));
        Eventually.until("GET parked on the server", () -> server.parkedRequests() == 1);

        server.close();

        assertThatThrownBy(getter::join)
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.SHUTDOWN);
                    assertThat(e.getMessage()).contains("shutting down");
                });
        Eventually.until("client notices the closed connection", () -> !store.isConnected());
        assertThatThrownBy(() -> store.set("k", new byte[0]))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE));
    }

    /** Bytes that no Ferry client sends, each of which must cost the sender its connection only. */
    @ParameterizedTest
    @ValueSource(strings = {"http", "oversized", "unknown-op", "truncated-body", "bad-magic"})
    void garbageClosesOnlyThatConnection(String kind) throws Exception {
        TcpStoreServer server = startServer();
        TcpStore healthy = client(server);
        healthy.set("before", new byte[] {1});

        try (Socket raw = new Socket(HOST, server.port())) {
            raw.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(raw.getOutputStream());
            InputStream in = raw.getInputStream();
            switch (kind) {
                case "http" -> out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(UTF_8));
                case "oversized" -> out.writeInt(1 << 30);
                case "bad-magic" -> writeFrame(out, 0, 0, new byte[] {0, 0, 0, 1, 0, 1});
                case "unknown-op" -> {
                    hello(out, in);
                    writeFrame(out, 1, 99, new byte[0]);
                }
                case "truncated-body" -> {
                    hello(out, in);
                    // SET whose key claims 1000 bytes in a 4-byte body.
                    writeFrame(out, 1, 1, new byte[] {0, 0, 3, (byte) 0xe8});
                }
                default -> throw new IllegalArgumentException(kind);
            }
            out.flush();
            assertThat(in.read()).as("server closes the connection").isEqualTo(-1);
        }

        Eventually.until("server dropped the bad connection", () -> server.activeConnections() == 1);
        assertThat(healthy.get("before")).containsExactly(1);
        healthy.set("after", new byte[] {2});
        assertThat(client(server).get("after")).containsExactly(2);
    }

    private static void hello(DataOutputStream out, InputStream in) throws IOException {
        writeFrame(out, 0, 0, new byte[] {0x46, 0x52, 0x53, 0x54, 0, 1});
        out.flush();
        byte[] reply = in.readNBytes(4 + 5 + 2 + 1);
        assertThat(reply).hasSize(12);
        assertThat(reply[8]).as("handshake status OK").isZero();
        assertThat(reply[11]).as("no authentication exchange follows").isZero();
    }

    private static void writeFrame(DataOutputStream out, int id, int type, byte[] body) throws IOException {
        out.writeInt(5 + body.length);
        out.writeInt(id);
        out.writeByte(type);
        out.write(body);
    }

    @Test
    void sixteenClientsRendezvousConcurrently() throws Exception {
        TcpStoreServer server = startServer();
        int clients = 16;
        List<String> allRanks = IntStream.range(0, clients).mapToObj(r -> "rank/" + r).toList();
        List<Background<Long>> ranks = new ArrayList<>();
        for (int r = 0; r < clients; r++) {
            int rank = r;
            ranks.add(Background.start("rank-" + rank, () -> {
                try (TcpStore store = TcpStore.connect(HOST, server.port(), LONG)) {
                    store.set("rank/" + rank, ("worker" + rank).getBytes(UTF_8));
                    long arrived = store.add("arrived", 1);
                    store.waitFor(allRanks);
                    for (int peer = 0; peer < clients; peer++) {
                        assertThat(store.get("rank/" + peer)).isEqualTo(("worker" + peer).getBytes(UTF_8));
                    }
                    return arrived;
                }
            }));
        }
        List<Long> arrivals = new ArrayList<>();
        for (Background<Long> rank : ranks) {
            arrivals.add(rank.join());
        }
        // Each client saw a distinct arrival number: the counter is atomic across connections.
        assertThat(arrivals).containsExactlyInAnyOrderElementsOf(
                IntStream.rangeClosed(1, clients).mapToObj(i -> (long) i).toList());
        assertThat(client(server).numKeys()).isEqualTo(clients + 1);
    }

    @Test
    void nothingLeaksAfterClientsAndServerClose() throws Exception {
        TcpStoreServer server = TcpStoreServer.start(HOST, 0);
        List<TcpStore> stores = new ArrayList<>();
        List<Background<byte[]>> parked = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            TcpStore store = TcpStore.connect(HOST, server.port(), LONG);
            stores.add(store);
            store.add("n", 1);
            parked.add(Background.start("parked-" + i, () -> store.get("never", Duration.ZERO)));
        }
        Eventually.until("4 GETs parked", () -> server.parkedRequests() == 4);
        assertThat(server.activeConnections()).isEqualTo(4);
        // acceptor + 4 connection readers + 4 parked waits
        assertThat(server.liveThreads()).isEqualTo(9);

        // Closing two clients releases their connections and their parked waits on the server.
        for (TcpStore store : stores.subList(0, 2)) {
            store.close();
            assertThat(store.liveThreads()).isZero();
        }
        Eventually.until("server released two connections",
                () -> server.activeConnections() == 2 && server.parkedRequests() == 2 && server.liveThreads() == 5);

        server.close();
        assertThat(server.liveThreads()).isZero();
        assertThat(server.activeConnections()).isZero();
        assertThat(server.parkedRequests()).isZero();
        for (TcpStore store : stores) {
            store.close();
            assertThat(store.liveThreads()).isZero();
        }
        for (Background<byte[]> get : parked) {
            assertThatThrownBy(get::join).isInstanceOf(RpcException.class);
        }
    }

    @Test
    void aValueOverTheFrameLimitIsRejectedBeforeSending() {
        TcpStoreServer server = startServer();
        TcpStore store = client(server);
        byte[] huge = new byte[64 * 1024 * 1024 + 1];
        assertThatThrownBy(() -> store.set("huge", huge))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("exceeds");
                });
        store.set("small", new byte[] {1});
        assertThat(store.get("small")).containsExactly(1);
    }

    @Test
    void optionsRejectBadPorts() {
        assertThatThrownBy(() -> TcpStoreOptions.builder().build())
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.getMessage()).contains("port is required"));
        assertThatThrownBy(() -> TcpStoreOptions.builder().port(70000).build())
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT));
        assertThatThrownBy(() -> TcpStoreOptions.builder().port(0).server(false).build())
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.getMessage()).contains("ephemeral"));
    }
}
