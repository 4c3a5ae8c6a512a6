package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.security.PeerAuthentication;
import java.time.Duration;
import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over loopback TCP with every connection authenticated
 * ({@link PeerAuthentication}): the handshake must be invisible to everything the contract checks.
 */
class NettyAuthenticatedTransportTest extends NettyTransportTest {
    static final PeerAuthentication AUTH = PeerAuthentication.of("contract-test-token-0123456789", Duration.ofSeconds(10));

    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(NettyTransport.Settings.tcp("127.0.0.1", 1, maxFrameBytes).withAuthentication(AUTH),
                threads);
    }
}
