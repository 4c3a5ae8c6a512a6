package dev.ferry.rpc.internal.transport;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadFactory;

/**
 * The transport contract over Unix domain sockets: transports on one host with the same host id
 * connect through the socket each advertises (epoll only).
 */
class NettyUdsTransportTest extends AbstractTransportTest {
    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(TestOptions.tcp(maxFrameBytes, t -> t.withUnixSockets(true)).build(), TestOptions.threads(threads));
    }

    @Override
    protected String unreachableAddress() throws Exception {
        // Neither the port nor the socket accepts a connection.
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "127.0.0.1:" + probe.getLocalPort() + ";uds=/nonexistent/ferry/rpc.sock;hostid="
                    + HostIdentity.local();
        }
    }

    @Override
    protected String expectedKind() {
        return io.netty.channel.epoll.Epoll.isAvailable() ? "uds" : "tcp";
    }
}
