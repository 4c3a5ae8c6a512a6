package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A TcpStore with a token: the server serves only clients that prove it and proves itself to
 * them; every mismatch fails at connect with {@code UNAUTHENTICATED} saying which side lacks what,
 * without retrying, and leaves the server serving its other clients.
 */
@Timeout(60)
class TcpStoreAuthenticationTest {
    private static final String TOKEN = "the-rendezvous-token-0123456789";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    @Test
    void clientsWithTheTokenUseTheStore() {
        TcpStore server = open(TcpStoreOptions.builder().port(0).server(true).authToken(TOKEN).timeout(TIMEOUT).build());
        int port = server.server().orElseThrow().port();
        TcpStore client = open(TcpStoreOptions.builder().port(port).authToken(TOKEN).timeout(TIMEOUT).build());
        client.set("k", new byte[] {4, 2});
        assertThat(server.get("k")).containsExactly(4, 2);
    }

    @Test
    void everyMismatchFailsAtOnceNamingWhatIsMissing() {
        TcpStore server = open(TcpStoreOptions.builder().port(0).server(true).authToken(TOKEN).timeout(TIMEOUT).build());
        int port = server.server().orElseThrow().port();

        // Clients that would retry forever (timeout ZERO): a mismatch must end the attempt at once.
        assertUnauthenticated(() -> TcpStore.connect("127.0.0.1", port, Duration.ZERO), "requires an authentication token");
        assertUnauthenticated(() -> TcpStore.create(TcpStoreOptions.builder().port(port)
                .authToken("another-token-9876543210").timeout(Duration.ZERO).build()), "proof is wrong");

        TcpStore open = open(TcpStoreOptions.builder().port(0).server(true).timeout(TIMEOUT).build());
        int openPort = open.server().orElseThrow().port();
        assertUnauthenticated(() -> TcpStore.create(TcpStoreOptions.builder().port(openPort).authToken(TOKEN)
                .timeout(Duration.ZERO).build()), "does not authenticate");

        server.set("still", new byte[] {1});
        TcpStore member = open(TcpStoreOptions.builder().port(port).authToken(TOKEN).timeout(TIMEOUT).build());
        assertThat(member.get("still")).containsExactly(1);
    }

    @Test
    void aClientThatSaysHelloButCannotProveItselfIsDropped() throws Exception {
        TcpStore server = open(TcpStoreOptions.builder().port(0).server(true).authToken(TOKEN).timeout(TIMEOUT).build());
        int port = server.server().orElseThrow().port();
        try (Socket raw = new Socket("127.0.0.1", port)) {
            raw.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(raw.getOutputStream());
            InputStream in = raw.getInputStream();
            byte[] hello = {0x46, 0x52, 0x53, 0x54, 0, 1};
            out.writeInt(5 + hello.length);
            out.writeInt(0);
            out.writeByte(0);
            out.write(hello);
            out.write(new byte[64]); // not an authentication exchange
            out.flush();
            byte[] reply = in.readNBytes(12);
            assertThat(reply[11]).as("an authentication exchange follows").isEqualTo((byte) 1);
            in.readNBytes(37); // the server's nonce
            int next;
            do {
                next = in.read();
            } while (next >= 0);
        }
        server.set("after", new byte[] {3});
        assertThat(server.get("after")).containsExactly(3);
    }

    private TcpStore open(TcpStoreOptions options) {
        TcpStore store = TcpStore.create(options);
        opened.add(store);
        return store;
    }

    private static void assertUnauthenticated(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String why) {
        assertThatThrownBy(call).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAUTHENTICATED)).hasMessageContaining(why);
    }
}
