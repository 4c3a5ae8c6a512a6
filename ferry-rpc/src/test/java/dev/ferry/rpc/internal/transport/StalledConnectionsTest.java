package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.wire.FrameCodec;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import dev.ferry.rpc.testing.HostileSockets;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * After its HELLO, a connection that stalls in the middle of a frame (half a frame, then nothing; a
 * byte every 100 ms) is closed within two stall periods, over real sockets; an idle one, between
 * frames, stays open however long.
 */
@Timeout(60)
class StalledConnectionsTest {
    private static final Duration STALL = Duration.ofMillis(300);

    private static byte[] encoded(OutboundMessage message) {
        ByteBuf frame = FrameCodec.encode(message, ByteBufAllocator.DEFAULT, 1 << 30);
        try {
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            return bytes;
        } finally {
            frame.release();
        }
    }

    /** A raw socket to a worker's transport that has sent its HELLO: a member, as far as the transport knows. */
    private static Socket member(String address, RecordingListener server) throws Exception {
        String hostPort = address.split(";")[0];
        int colon = hostPort.lastIndexOf(':');
        Socket socket = new Socket(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        socket.setSoTimeout((int) (20 * STALL.toMillis()));
        socket.getOutputStream().write(encoded(TestMessages.hello()));
        server.accepted();
        return socket;
    }

    @Test
    void halfAFrameOrATrickleIsClosedWithinTwoPeriodsAnIdleConnectionIsNot() throws Exception {
        try (NettyTransports transports = new NettyTransports("stall-test")) {
            RecordingListener server = new RecordingListener();
            String address = transports.listen(TestOptions.tcp(1 << 30).stallTimeout(STALL).build(), server);
            byte[] frame = encoded(TestMessages.message(1, new byte[5_000]));

            Socket idle = member(address, server);
            Socket half = member(address, server);
            Socket trickling = member(address, server);
            OutputStream out = half.getOutputStream();
            out.write(Arrays.copyOf(frame, frame.length / 2));
            out.flush();
            long start = System.nanoTime();
            assertThat(HostileSockets.closedByPeer(half)).as("half a frame, then nothing").isTrue();
            Duration halfClosed = Duration.ofNanos(System.nanoTime() - start);
            try (HostileSockets.Trickle trickle = HostileSockets.trickle(trickling, frame, Duration.ofMillis(100))) {
                assertThat(HostileSockets.closedByPeer(trickling)).as("a byte every 100 ms").isTrue();
                assertThat(trickle.sent()).isLessThan(frame.length);
            }
            System.out.printf("stall bound %d ms: half a frame closed after %d ms%n", STALL.toMillis(),
                    halfClosed.toMillis());
            // at least two looks; under load a look may come late, never early
            assertThat(halfClosed).isGreaterThanOrEqualTo(STALL);

            // The idle member outlived both, and more than three periods: it still delivers.
            assertThatThrownBy(() -> {
                idle.setSoTimeout((int) (4 * STALL.toMillis()));
                idle.getInputStream().read();
            }).isInstanceOf(SocketTimeoutException.class);
            idle.getOutputStream().write(frame);
            assertThat(server.message().id()).isEqualTo(1);
            for (Socket socket : new Socket[] {idle, half, trickling}) {
                close(socket);
            }
        }
    }

    private static void close(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closed by the worker already
        }
    }
}
