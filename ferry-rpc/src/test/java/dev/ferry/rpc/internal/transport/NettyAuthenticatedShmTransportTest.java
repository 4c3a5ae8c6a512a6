package dev.ferry.rpc.internal.transport;

import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over Unix domain sockets with the shared-memory channel, every connection
 * authenticated: the shared-memory negotiation runs behind the handshake.
 */
class NettyAuthenticatedShmTransportTest extends NettyShmTransportTest {
    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(TestOptions.tcp(maxFrameBytes,
                t -> t.withUnixSockets(true).withSharedMemoryBytes(64L << 20))
                .authToken(NettyAuthenticatedTransportTest.TOKEN).build(), TestOptions.threads(threads));
    }
}
