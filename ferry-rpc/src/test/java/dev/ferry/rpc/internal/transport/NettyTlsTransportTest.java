package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.testing.TestCertificates;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over loopback TCP with TLS on every connection and the token's handshake
 * inside it: graceful closes, aborts and oversized frames behave as in the clear.
 */
class NettyTlsTransportTest extends NettyTransportTest {
    private static javax.net.ssl.SSLContext tls;

    @BeforeAll
    static void certificates(@TempDir Path dir) throws Exception {
        tls = TestCertificates.context(TestCertificates.keyStore(dir, "contract"));
    }

    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(TestOptions.tcp(maxFrameBytes)
                .authToken(NettyAuthenticatedTransportTest.TOKEN).tls(tls).build(), TestOptions.threads(threads));
    }
}
