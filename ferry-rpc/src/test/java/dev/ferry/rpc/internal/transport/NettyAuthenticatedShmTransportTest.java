package dev.ferry.rpc.internal.transport;

import java.nio.file.Path;
import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over Unix domain sockets with the shared-memory channel, every connection
 * authenticated: the shared-memory negotiation runs behind the handshake.
 */
class NettyAuthenticatedShmTransportTest extends NettyShmTransportTest {
    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(NettyTransport.Settings.tcp("127.0.0.1", 1, maxFrameBytes).withUnixSockets(true)
                .withAuthentication(NettyAuthenticatedTransportTest.AUTH),
                new SharedMemory.Settings(64L << 20, 256 << 10, true, Path.of("/dev/shm")), threads);
    }
}
