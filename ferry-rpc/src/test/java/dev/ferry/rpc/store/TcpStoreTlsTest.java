package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A TcpStore over TLS: the server and its clients present certificates and accept only peers
 * their trust store vouches for; every mismatch (an untrusted certificate, TLS on one end only)
 * fails the connect with {@code UNAUTHENTICATED} without retrying, and leaves the server serving its
 * other clients.
 */
@Timeout(60)
class TcpStoreTlsTest {
    private static final String TOKEN = "the-rendezvous-token-0123456789";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static SSLContext cluster;
    private static SSLContext stranger;
    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeAll
    static void certificates(@TempDir Path dir) throws Exception {
        cluster = TestCertificates.context(TestCertificates.keyStore(dir, "cluster"));
        stranger = TestCertificates.context(TestCertificates.keyStore(dir, "stranger"));
    }

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    @Test
    void clientsWithTrustedCertificatesUseTheStore() {
        TcpStore server = open(serverOptions().tls(cluster).authToken(TOKEN).build());
        int port = server.server().orElseThrow().port();
        TcpStoreOptions options = TcpStoreOptions.builder().port(port).tls(cluster).authToken(TOKEN).timeout(TIMEOUT).build();
        assertThat(options.toString()).contains("authenticated").contains("TLS").doesNotContain(TOKEN);
        TcpStore client = open(options);
        client.set("k", new byte[] {4, 2});
        assertThat(server.get("k")).containsExactly(4, 2);
        assertThat(client.add("n", 5)).isEqualTo(5);
    }

    @Test
    void everyMismatchFailsAtOnceAndTheServerServesOn() {
        TcpStore server = open(serverOptions().tls(cluster).build());
        int port = server.server().orElseThrow().port();

        // Clients that would retry forever (timeout ZERO): a TLS failure must end the attempt at once.
        assertUnauthenticated(TcpStoreOptions.builder().port(port).tls(stranger).timeout(Duration.ZERO).build(),
                "TLS with the TcpStore server at 127.0.0.1:" + port + " failed");
        assertUnauthenticated(TcpStoreOptions.builder().port(port).timeout(Duration.ZERO).build(),
                "accepts TLS connections only");

        TcpStore plain = open(serverOptions().build());
        int plainPort = plain.server().orElseThrow().port();
        assertUnauthenticated(TcpStoreOptions.builder().port(plainPort).tls(cluster).timeout(Duration.ZERO).build(),
                "TLS with the TcpStore server at 127.0.0.1:" + plainPort + " failed");

        server.set("still", new byte[] {1});
        TcpStore member = open(TcpStoreOptions.builder().port(port).tls(cluster).timeout(TIMEOUT).build());
        assertThat(member.get("still")).containsExactly(1);
    }

    @Test
    void aRendezvousOverTcpUsesTheGroupsTls() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = probe.getLocalPort();
        }
        String url = "tcp://127.0.0.1:" + port;
        Background<RendezvousResult> rank1 = Background.start("rank1", () -> Rendezvous.builder()
                .initMethod(url + "?rank=1&world_size=2").timeout(TIMEOUT).tls(cluster).build().connect());
        try (RendezvousResult rank0 = Rendezvous.builder().initMethod(url + "?rank=0&world_size=2")
                .timeout(TIMEOUT).tls(cluster).build().connect();
             RendezvousResult one = rank1.join()) {
            one.store().add("arrived", 1);
            rank0.store().add("arrived", 1);
            assertThat(rank0.store().add("arrived", 0)).isEqualTo(2);
            assertUnauthenticated(TcpStoreOptions.builder().port(port).timeout(Duration.ZERO).build(),
                    "accepts TLS connections only");
        }
    }

    private static TcpStoreOptions.Builder serverOptions() {
        return TcpStoreOptions.builder().port(0).server(true).timeout(TIMEOUT);
    }

    private void assertUnauthenticated(TcpStoreOptions options, String message) {
        assertThatThrownBy(() -> open(options))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAUTHENTICATED))
                .hasMessageContaining("TcpStore server at 127.0.0.1:")
                .hasMessageContaining(message);
    }

    private TcpStore open(TcpStoreOptions options) {
        TcpStore store = TcpStore.create(options);
        opened.add(store);
        return store;
    }
}
