package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.Delivery;

import dev.ferry.rpc.RpcBackendOptions;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.wire.InboundMessage;
import dev.ferry.rpc.testing.TestCertificates;
import io.netty.handler.ssl.SslHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

import static dev.ferry.rpc.internal.transport.TestMessages.bytesOf;
import static dev.ferry.rpc.internal.transport.TestMessages.message;
import static dev.ferry.rpc.internal.transport.TestMessages.randomBytes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * TCP connections with mutual TLS ({@link TlsChannels}): peers with trusted certificates talk
 * encrypted, large messages included; a peer whose certificate is not trusted, or that
 * does not speak TLS, is dropped with {@code UNAUTHENTICATED}.
 */
@Timeout(60)
class TlsHandshakeTest {
    private static final int MIB = 1 << 20;
    private static SSLContext groupContext;
    private static SSLContext group;
    private static SSLContext stranger;
    private final NettyTransports transports = new NettyTransports("tls-test");

    @BeforeAll
    static void certificates(@TempDir Path dir) throws Exception {
        groupContext = TestCertificates.context(TestCertificates.keyStore(dir, "group"));
        group = groupContext;
        stranger = TestCertificates.context(TestCertificates.keyStore(dir, "stranger"));
    }

    @AfterEach
    void close() {
        transports.close();
    }

    @Test
    void trustedPeersTalkOverTls13IncludingLargeMessages() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(group), server);
        RecordingListener clientEvents = new RecordingListener();
        PeerChannel client = transports.connect(settings(group), clientEvents, address);
        PeerChannel accepted = server.accepted();

        client.send(message(1, new byte[] {1, 2, 3}), Delivery.UNORDERED, e -> { });
        assertThat(server.message().id()).isEqualTo(1);
        SslHandler tls = ((NettyConnection) client).channel().pipeline().get(SslHandler.class);
        assertThat(tls).isNotNull();
        assertThat(tls.engine().getSession().getProtocol()).isEqualTo("TLSv1.3");
        assertThat(tls.engine().getSession().getPeerCertificates()).isNotEmpty();

        byte[] large = randomBytes(9 * MIB + 3);
        client.send(message(3, large), Delivery.UNORDERED, e -> { });
        InboundMessage received = server.message();
        assertThat(received.id()).isEqualTo(3);
        assertThat(bytesOf(received.inBand())).isEqualTo(large);
        byte[] back = randomBytes(5 * MIB + 1);
        accepted.send(message(4, back), Delivery.UNORDERED, e -> { });
        InboundMessage reply = clientEvents.message();
        assertThat(reply.id()).isEqualTo(4);
        assertThat(bytesOf(reply.inBand())).isEqualTo(back);
    }

    @Test
    void aPeerWithAnUntrustedCertificateIsDroppedOnBothEnds() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(group), server);
        RecordingListener intruderEvents = new RecordingListener();
        PeerChannel intruder = transports.connect(settings(stranger), intruderEvents, address);
        CompletableFuture<Throwable> sendFailure = new CompletableFuture<>();
        intruder.send(message(1, new byte[] {42}), Delivery.UNORDERED, sendFailure::complete);

        assertTlsFailure(server.closedCause());
        assertTlsFailure(intruderEvents.closedCause());
        assertThat(sendFailure.get(30, TimeUnit.SECONDS)).isInstanceOf(RpcException.class);
        assertThat(server.messages).isEmpty();

        PeerChannel member = transports.connect(settings(group), new RecordingListener(), address);
        member.send(message(2, new byte[] {7}), Delivery.UNORDERED, e -> { });
        assertThat(server.message().id()).isEqualTo(2);
    }

    @Test
    void withHostNamesVerifiedACertificateNamingTheDialedHostIsAccepted() throws Exception {
        RpcBackendOptions verifying = verifying(groupContext);
        RecordingListener server = new RecordingListener();
        String address = transports.listen(verifying, server);
        PeerChannel client = transports.connect(verifying, new RecordingListener(), address);

        byte[] large = randomBytes(9 * MIB + 3);
        client.send(message(2, large), Delivery.UNORDERED, e -> { });
        assertThat(bytesOf(server.message().inBand())).isEqualTo(large);
        SslHandler tls = ((NettyConnection) client).channel().pipeline().get(SslHandler.class);
        assertThat(tls.engine().getSSLParameters().getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
        assertThat(tls.engine().getPeerHost()).isEqualTo("127.0.0.1");
    }

    @Test
    void withHostNamesVerifiedTheDialerRefusesATrustedCertificateForAnotherHost(@TempDir Path dir) throws Exception {
        SSLContext elsewhere = TestCertificates.context(
                TestCertificates.keyStore(dir, "elsewhere", "dns:elsewhere.invalid,ip:10.11.12.13"));
        RecordingListener server = new RecordingListener();
        String address = transports.listen(verifying(elsewhere), server);
        RecordingListener clientEvents = new RecordingListener();
        PeerChannel client = transports.connect(verifying(elsewhere), clientEvents, address);
        client.send(message(1, new byte[] {42}), Delivery.UNORDERED, e -> { });

        assertThat(clientEvents.closedCause()).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNAUTHENTICATED);
            assertThat(e.getMessage()).contains("No subject alternative names matching IP address 127.0.0.1");
        });
        assertThat(server.messages).isEmpty();

        // The same trusted certificate without the check: the chain is all that counts.
        String open = transports.listen(settings(elsewhere), server);
        transports.connect(settings(elsewhere), new RecordingListener(), open)
                .send(message(2, new byte[] {7}), Delivery.UNORDERED, e -> { });
        assertThat(server.message().id()).isEqualTo(2);
    }

    @Test
    void aPeerWithoutTlsIsDropped() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(settings(group), server);
        RecordingListener plainEvents = new RecordingListener();
        PeerChannel plain = transports.connect(TestOptions.tcp(1 << 30).build(), plainEvents, address);
        plain.send(message(1, new byte[] {42}), Delivery.UNORDERED, e -> { });

        assertTlsFailure(server.closedCause());
        assertThat(server.messages).isEmpty();
    }

    @Test
    void aTlsWorkerCannotUseAPlainOne() throws Exception {
        RecordingListener server = new RecordingListener();
        String address = transports.listen(TestOptions.tcp(1 << 30).build(), server);
        RecordingListener clientEvents = new RecordingListener();
        PeerChannel client = transports.connect(settings(group), clientEvents, address);
        client.send(message(1, new byte[] {42}), Delivery.UNORDERED, e -> { });

        assertTlsFailure(clientEvents.closedCause());
        assertThat(server.messages).isEmpty();
    }

    private static RpcBackendOptions verifying(SSLContext context) {
        return TestOptions.tcp(1 << 30).tls(context).tlsVerifyHostnames(true).build();
    }

    private static RpcBackendOptions settings(SSLContext tls) {
        return TestOptions.tcp(1 << 30).tls(tls).build();
    }

    private static void assertTlsFailure(Throwable cause) {
        assertThat(cause).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAUTHENTICATED));
        assertThat(cause).hasMessageContaining("TLS handshake");
    }
}
