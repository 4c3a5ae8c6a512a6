package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.security.PeerAuthentication;
import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over loopback TCP with every connection authenticated
 * ({@link PeerAuthentication}): the handshake must be invisible to everything the contract checks.
 */
class NettyAuthenticatedTransportTest extends NettyTransportTest {
    static final String TOKEN = "contract-test-token-0123456789";

    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(TestOptions.tcp(maxFrameBytes).authToken(TOKEN).build(), TestOptions.threads(threads));
    }
}
