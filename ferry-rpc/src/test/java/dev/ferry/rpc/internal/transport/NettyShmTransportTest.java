package dev.ferry.rpc.internal.transport;

import io.netty.channel.epoll.Epoll;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over Unix domain sockets with the shared-memory channel: large buffers of
 * the contract's messages go through shared memory, and connections report {@code uds+shm} once
 * negotiated (epoll only).
 */
class NettyShmTransportTest extends AbstractTransportTest {
    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(TestOptions.tcp(maxFrameBytes,
                t -> t.withUnixSockets(true).withSharedMemoryBytes(64L << 20)).build(), TestOptions.threads(threads));
    }

    @Override
    protected String unreachableAddress() throws Exception {
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "127.0.0.1:" + probe.getLocalPort() + ";uds=/nonexistent/ferry/rpc.sock;hostid="
                    + HostIdentity.local();
        }
    }

    @Override
    protected String expectedKind() {
        return Epoll.isAvailable() ? "uds+shm" : "tcp";
    }
}
