package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;

import dev.ferry.rpc.RpcBackendOptions;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.wire.InboundMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.ferry.rpc.internal.transport.TestMessages.bytesOf;
import static dev.ferry.rpc.internal.transport.TestMessages.message;
import static dev.ferry.rpc.internal.transport.TestMessages.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Connections authenticated with a shared token ({@link PeerAuthentication}, {@link AuthHandshake}):
 * peers holding it talk as before, large messages included; anything else that
 * connects is dropped before a byte of it reaches Ferry, learns nothing but a nonce, and leaves the
 * server serving the others.
 */
@Timeout(60)
class AuthHandshakeTest {
    private static final int MIB = 1 << 20;
    private static final String TOKEN = "the-group-token-0123456789";
    private static final String OTHER_TOKEN = "another-token-9876543210";
    private static final PeerAuthentication AUTH = PeerAuthentication.of(TOKEN, Duration.ofSeconds(10));
    private static final PeerAuthentication OTHER = PeerAuthentication.of(OTHER_TOKEN, Duration.ofSeconds(10));
    private final NettyTransports transports = new NettyTransports("auth-test");

    @AfterEach
    void close() {
        transports.close();
    }

    @Test
    void peersWithTheTokenTalkIncludingLargeMessages() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(TOKEN), server);
        RecordingListener clientEvents = new RecordingListener();
        PeerChannel client = transports.connect(settings(TOKEN), clientEvents, address);
        PeerChannel accepted = server.accepted();

        client.send(message(1, "hello".getBytes(StandardCharsets.UTF_8)), Delivery.UNORDERED, e -> { });
        assertThat(server.message().id()).isEqualTo(1);
        accepted.send(message(2, "back".getBytes(StandardCharsets.UTF_8)), Delivery.UNORDERED, e -> { });
        assertThat(clientEvents.message().id()).isEqualTo(2);

        byte[] large = randomBytes(9 * MIB + 5);
        client.send(message(4, large), Delivery.UNORDERED, e -> { });
        InboundMessage received = server.message();
        assertThat(received.id()).isEqualTo(4);
        assertThat(bytesOf(received.inBand())).isEqualTo(large);
    }

    @Test
    void aPeerWithAnotherTokenIsDroppedOnBothEndsAndTheServerGoesOnServingTheGroup() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(TOKEN), server);
        RecordingListener intruderEvents = new RecordingListener();
        PeerChannel intruder = transports.connect(settings(OTHER_TOKEN), intruderEvents, address);
        CompletableFuture<Throwable> sendFailure = new CompletableFuture<>();
        intruder.send(message(1, new byte[] {42}), Delivery.UNORDERED, sendFailure::complete);

        assertUnauthenticated(intruderEvents.closedCause());
        assertUnauthenticated(sendFailure.get(30, TimeUnit.SECONDS));
        assertUnauthenticated(server.closedCause());
        assertThat(server.messages).isEmpty();

        RecordingListener memberEvents = new RecordingListener();
        PeerChannel member = transports.connect(settings(TOKEN), memberEvents, address);
        member.send(message(2, new byte[] {7}), Delivery.UNORDERED, e -> { });
        InboundMessage received = server.message();
        assertThat(received.id()).isEqualTo(2);
        assertThat(server.messages).isEmpty();
    }

    @Test
    void overAUnixSocketTheRejectedPeerIsNamedByItsProcess() throws Exception {
        assumeTrue(io.netty.channel.epoll.Epoll.isAvailable(), "Unix sockets need the native transport");
        RecordingListener server = new RecordingListener();
        String address = transports.listen(uds(TOKEN), server);
        RecordingListener intruderEvents = new RecordingListener();
        PeerChannel intruder = transports.connect(uds(OTHER_TOKEN), intruderEvents, address);
        assertThat(intruder.kind()).startsWith("uds");

        Throwable cause = server.closedCause();
        assertUnauthenticated(cause);
        assertThat(cause).hasMessageContaining("connection from a local process (pid " + ProcessHandle.current().pid());
        assertUnauthenticated(intruderEvents.closedCause());
    }

    @Test
    void aWorkerWithATokenCannotUseOneWithout() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(TestOptions.tcp(1 << 30).build(), server);
        RecordingListener clientEvents = new RecordingListener();
        PeerChannel client = transports.connect(settings(TOKEN, Duration.ofMillis(500)), clientEvents, address);
        CompletableFuture<Throwable> sendFailure = new CompletableFuture<>();
        client.send(message(1, new byte[] {42}), Delivery.UNORDERED, sendFailure::complete);

        assertUnauthenticated(clientEvents.closedCause());
        assertUnauthenticated(sendFailure.get(30, TimeUnit.SECONDS));
        assertThat(server.messages).isEmpty();
    }

    @Test
    void somethingElseThatConnectsIsDroppedAndLearnsOnlyANonce() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(TOKEN), server);
        try (Socket socket = connect(address)) {
            socket.getOutputStream().write("GET / HTTP/1.1\r\nHost: ferry\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] everything = readToEnd(socket.getInputStream());
            assertThat(everything).hasSize(PeerAuthentication.HELLO_BYTES);
            assertThat(ByteBuffer.wrap(everything).getInt()).isEqualTo(PeerAuthentication.MAGIC);
        }
        Throwable cause = server.closedCause();
        assertUnauthenticated(cause);
        assertThat(cause).hasMessageContaining("not a Ferry authentication handshake");
        assertThat(server.messages).isEmpty();
    }

    @Test
    void aForgedProofIsRejected() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(TOKEN), server);
        try (Socket socket = connect(address)) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] serverHello = new byte[PeerAuthentication.HELLO_BYTES];
            in.readFully(serverHello);
            OutputStream out = socket.getOutputStream();
            out.write(ByteBuffer.allocate(PeerAuthentication.HELLO_BYTES).putInt(PeerAuthentication.MAGIC)
                    .put(PeerAuthentication.VERSION).put(PeerAuthentication.newNonce()).array());
            // The server's own proof sent back (a reflection) must not pass for the opener's.
            byte[] serverProof = new byte[PeerAuthentication.PROOF_BYTES];
            in.readFully(serverProof);
            out.write(serverProof);
            assertThat(readToEnd(in)).isEmpty();
        }
        Throwable cause = server.closedCause();
        assertUnauthenticated(cause);
        assertThat(cause).hasMessageContaining("proof is wrong");
    }

    @Test
    void aPeerThatSaysNothingIsDroppedAfterTheTimeout() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(TOKEN, Duration.ofMillis(300)), server);
        try (Socket socket = connect(address)) {
            assertThat(readToEnd(socket.getInputStream())).hasSize(PeerAuthentication.HELLO_BYTES);
        }
        Throwable cause = server.closedCause();
        assertUnauthenticated(cause);
        assertThat(cause).hasMessageContaining("did not authenticate within 300 ms");
    }

    @Test
    void proofsDependOnTheRoleAndBothNoncesAndTheTokenIsNeverShown() {
        byte[] mine = PeerAuthentication.newNonce();
        byte[] theirs = PeerAuthentication.newNonce();
        byte[] asAcceptor = AUTH.proof(true, mine, theirs);

        assertThat(AUTH.proof(false, mine, theirs)).isNotEqualTo(asAcceptor);
        assertThat(AUTH.proof(true, theirs, mine)).isNotEqualTo(asAcceptor);
        assertThat(OTHER.proof(true, mine, theirs)).isNotEqualTo(asAcceptor);
        assertThat(AUTH.verify(false, theirs, mine, asAcceptor)).isTrue();
        assertThat(AUTH.verify(true, mine, theirs, asAcceptor)).as("a proof reflected back").isFalse();
        assertThat(AUTH.toString()).doesNotContain("the-group-token");
        assertThatThrownBy(() -> PeerAuthentication.of("short", Duration.ofSeconds(1)))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("at least 16");
    }

    private static RpcBackendOptions settings(String token) {
        return settings(token, Duration.ofSeconds(10));
    }

    private static RpcBackendOptions settings(String token, Duration timeout) {
        return TestOptions.tcp(1 << 30).authToken(token).authTimeout(timeout).build();
    }

    /** Over a Unix socket. */
    private static RpcBackendOptions uds(String token) {
        return TestOptions.tcp(1 << 30, t -> t.withUnixSockets(true)).authToken(token).build();
    }

    private static void assertUnauthenticated(Throwable cause) {
        assertThat(cause).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAUTHENTICATED));
    }

    private static Socket connect(String address) throws IOException {
        String hostPort = address.split(";")[0];
        int colon = hostPort.lastIndexOf(':');
        Socket socket = new Socket(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        socket.setSoTimeout(20_000);
        return socket;
    }

    /** Everything the server sends until it closes; fails if it stays open for 20 s. */
    private static byte[] readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                all.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept the connection open; it sent " + all.size() + " bytes", e);
        } catch (java.net.SocketException e) {
            // Reset by the server closing with our bytes unread: closed all the same.
        }
        return all.toByteArray();
    }
}
