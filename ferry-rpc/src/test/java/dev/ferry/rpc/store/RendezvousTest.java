package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.testing.Eventually;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Init method parsing and the stores each method produces, with an injected environment. */
@Timeout(30)
class RendezvousTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private static Rendezvous.Builder rdv(String initMethod) {
        return Rendezvous.builder().initMethod(initMethod).timeout(TIMEOUT).environment(Map.of());
    }

    private static void assertInvalid(Rendezvous.Builder builder, String message) {
        assertThatThrownBy(() -> builder.build().connect())
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).isEqualTo(message);
                });
    }

    @Test
    void envRequiresRankThenWorldSizeThenMasterAddrThenMasterPort() {
        Map<String, String> env = new HashMap<>();
        String prefix = "Error initializing Ferry using env:// rendezvous: ";
        assertInvalid(rdv("env://").environment(env), prefix + "environment variable RANK expected, but not set");
        env.put("RANK", "0");
        assertInvalid(rdv("env://").environment(env), prefix + "environment variable WORLD_SIZE expected, but not set");
        env.put("WORLD_SIZE", "2");
        assertInvalid(rdv("env://").environment(env), prefix + "environment variable MASTER_ADDR expected, but not set");
        env.put("MASTER_ADDR", "127.0.0.1");
        assertInvalid(rdv("env://").environment(env), prefix + "environment variable MASTER_PORT expected, but not set");
        env.put("MASTER_PORT", "twenty");
        assertInvalid(rdv("env://").environment(env),
                prefix + "environment variable MASTER_PORT must be an integer, got 'twenty'");
        env.put("MASTER_PORT", "70000");
        assertInvalid(rdv("env://").environment(env),
                prefix + "environment variable MASTER_PORT must be a port in 0..65535, got 70000");
    }

    @Test
    void envArgumentsWinOverTheEnvironmentAndAreValidated() {
        Map<String, String> env = Map.of("RANK", "oops", "WORLD_SIZE", "also oops");
        // Explicit rank and world size mean RANK / WORLD_SIZE are never read; MASTER_ADDR is next.
        assertInvalid(rdv("env://").environment(env).rank(1).worldSize(2),
                "Error initializing Ferry using env:// rendezvous: environment variable MASTER_ADDR expected, but not set");
        assertInvalid(rdv("env://").environment(Map.of("RANK", "x")),
                "Error initializing Ferry using env:// rendezvous: environment variable RANK must be an integer, got 'x'");
        assertInvalid(rdv("env://").rank(2).worldSize(2),
                "Error initializing Ferry using env:// rendezvous: rank must be in [0, 2), got 2");
        assertInvalid(rdv("env://").rank(0).worldSize(-2),
                "Error initializing Ferry using env:// rendezvous: world size must be at least 1 (or 0: a world"
                        + " without a fixed size), got -2");
        // World size 0: no fixed size (a worker joining a running world); the rank still must be valid.
        assertInvalid(rdv("env://").environment(Map.of("RANK", "-1")).worldSize(0),
                "Error initializing Ferry using env:// rendezvous: rank must be at least 0, got -1");
    }

    @Test
    void tcpAndFileRequirePortPathRankAndWorldSize() {
        assertInvalid(rdv("tcp://127.0.0.1").rank(0).worldSize(1),
                "Error initializing Ferry using tcp:// rendezvous: port number missing");
        assertInvalid(rdv("tcp://127.0.0.1:29500"),
                "Error initializing Ferry using tcp:// rendezvous: rank parameter missing");
        assertInvalid(rdv("tcp://127.0.0.1:29500").rank(0),
                "Error initializing Ferry using tcp:// rendezvous: world size parameter missing");
        assertInvalid(rdv("file://"), "Error initializing Ferry using file:// rendezvous: path missing");
        assertInvalid(rdv("file:///tmp/store"),
                "Error initializing Ferry using file:// rendezvous: rank parameter missing");
        assertInvalid(rdv("file:///tmp/store?rank=1&world_size=2").rank(0),
                "Error initializing Ferry using file:// rendezvous: the URL sets rank=1 but 0 was passed; give it only once");
    }

    @Test
    void unsupportedOrMalformedUrlsAreRejected() {
        assertInvalid(rdv("zookeeper://zk:2181").rank(0).worldSize(1),
                "Unsupported init method 'zookeeper://zk:2181': expected env://, tcp://host:port, file:///path"
                        + " (etcd:// and zookeeper:// need ferry-store-etcd or ferry-store-zookeeper on the class path)");
        assertInvalid(rdv("127.0.0.1:29500").rank(0).worldSize(1),
                "Unsupported init method '127.0.0.1:29500': expected env://, tcp://host:port, file:///path"
                        + " (etcd:// and zookeeper:// need ferry-store-etcd or ferry-store-zookeeper on the class path)");
        assertThatThrownBy(() -> rdv("tcp://host:notaport").rank(0).worldSize(1).build().connect())
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("tcp://host:notaport");
                });
    }

    @Test
    void envRendezvousRankZeroHostsTheServerOthersConnect() {
        Map<String, String> env0 = Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "0", "RANK", "0",
                "WORLD_SIZE", "2");
        try (RendezvousResult rank0 = rdv("env://").environment(env0).build().connect()) {
            assertThat(rank0.rank()).isZero();
            assertThat(rank0.worldSize()).isEqualTo(2);
            TcpStoreServer server = rank0.server().orElseThrow();

            Map<String, String> env1 = Map.of("MASTER_ADDR", "127.0.0.1",
                    "MASTER_PORT", Integer.toString(server.port()), "RANK", "1", "WORLD_SIZE", "2");
            try (RendezvousResult rank1 = rdv("env://").environment(env1).build().connect()) {
                assertThat(rank1.rank()).isEqualTo(1);
                assertThat(rank1.server()).isEmpty();
                rank1.store().set("hello", "from 1".getBytes(UTF_8));
                assertThat(rank0.store().get("hello")).isEqualTo("from 1".getBytes(UTF_8));
                assertThat(rank1.store().timeout()).isEqualTo(TIMEOUT);
            }
            Eventually.until("server saw rank 1 leave", () -> server.activeConnections() == 1);
        }
    }

    @Test
    void tcpRendezvousWorksWhateverRankStartsFirst() throws Exception {
        int port = freePort();
        String url = "tcp://127.0.0.1:" + port;
        // Rank 1 first: it keeps retrying until rank 0's server is up.
        Background<RendezvousResult> rank1 = Background.start("rank1",
                () -> rdv(url + "?rank=1&world_size=2").build().connect()).awaitBlocked();
        try (RendezvousResult rank0 = rdv(url).rank(0).worldSize(2).build().connect();
             RendezvousResult one = rank1.join()) {
            assertThat(one.rank()).isEqualTo(1);
            assertThat(one.worldSize()).isEqualTo(2);
            one.store().add("arrived", 1);
            rank0.store().add("arrived", 1);
            assertThat(rank0.store().add("arrived", 0)).isEqualTo(2);
        }
    }

    @Test
    void tcpRankZeroOnABusyPortReportsAddressInUse() {
        try (TcpStoreServer busy = TcpStoreServer.start("127.0.0.1", 0)) {
            assertThatThrownBy(() -> rdv("tcp://127.0.0.1:" + busy.port()).rank(0).worldSize(1).build().connect())
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(Code.RENDEZVOUS_FAILED);
                        assertThat(e.getMessage()).contains("Address already in use");
                    });
        }
    }

    @Test
    void fileRendezvousSharesOneFile() {
        String url = "file://" + dir.resolve("rdv store").toAbsolutePath();
        try (RendezvousResult a = rdv(url).rank(0).worldSize(2).build().connect();
             RendezvousResult b = rdv(url + "?world_size=2").rank(1).build().connect()) {
            assertThat(a.store()).isInstanceOf(FileStore.class);
            assertThat(a.server()).isEmpty();
            a.store().set("rank/0", new byte[] {0});
            b.store().set("rank/1", new byte[] {1});
            a.store().waitFor(List.of("rank/0", "rank/1"));
            assertThat(b.worldSize()).isEqualTo(2);
        }
    }

    @Test
    void closingTheResultClosesTheServerItHosts() {
        RendezvousResult rank0 = rdv("tcp://127.0.0.1:0").rank(0).worldSize(1).build().connect();
        TcpStoreServer server = rank0.server().orElseThrow();
        rank0.close();
        assertThat(server.isClosed()).isTrue();
        assertThat(server.liveThreads()).isZero();
        assertThatThrownBy(() -> rank0.store().numKeys())
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.SHUTDOWN));
    }

    @Test
    void ipv6LiteralHostsParse() {
        // Parse only: a missing rank fails after the host and port were accepted.
        assertInvalid(rdv("tcp://[::1]:29500"), "Error initializing Ferry using tcp:// rendezvous: rank parameter missing");
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return probe.getLocalPort();
        }
    }
}
