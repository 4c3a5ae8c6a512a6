package dev.ferry.rpc.internal.transport;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadFactory;

/** The transport contract over loopback TCP. */
class NettyTransportTest extends AbstractTransportTest {
    @Override
    protected Transport newTransport(String name, long maxFrameBytes, ThreadFactory threads) {
        return new NettyTransport(TestOptions.tcp(maxFrameBytes).build(), TestOptions.threads(threads));
    }

    @Override
    protected String unreachableAddress() throws Exception {
        // A port that was free a moment ago: connecting is refused at once.
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "127.0.0.1:" + probe.getLocalPort();
        }
    }

    @Override
    protected String expectedKind() {
        return "tcp";
    }
}
