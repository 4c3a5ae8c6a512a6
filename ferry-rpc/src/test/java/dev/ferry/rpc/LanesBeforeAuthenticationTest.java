package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A socket on a worker's lane port that has not proved anything costs a small fixed amount of
 * memory, no thread of its own and a bounded time: hundreds of them change neither the worker's
 * threads nor its calls, each is closed by the handshake timeout (or at once past the limit of
 * handshakes in progress), and a length it claims is never allocated.
 */
@Timeout(120)
class LanesBeforeAuthenticationTest {
    private static final String TOKEN = "a-secret-of-the-group-0123456789";

    private static int lanePort(RpcAgent agent) {
        return Integer.parseInt(agent.getDebugInfo().get("transport.lanes.tcp_port"));
    }

    @Test
    void manySilentSocketsGetNoThreadsAndAreClosedInTime() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.authToken(TOKEN).authTimeout(Duration.ofSeconds(2)))) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.rpcSync("worker1", Ops::noop, 1)).isEqualTo(1);
            int threadsBefore = Thread.activeCount();
            List<Socket> silent = new ArrayList<>();
            try {
                for (int i = 0; i < 300; i++) {
                    Socket socket = new Socket("127.0.0.1", lanePort(cluster.agent(1)));
                    socket.setSoTimeout(15_000);
                    silent.add(socket);
                }
                assertThat(Thread.activeCount() - threadsBefore).as("threads the sockets got").isLessThan(10);
                // The worker goes on serving calls meanwhile, lanes included.
                for (int i = 0; i < 50; i++) {
                    assertThat(w0.rpcSync("worker1", Ops::noop, i)).isEqualTo(i);
                }
                long started = System.nanoTime();
                for (Socket socket : silent) {
                    assertThat(readsToTheEnd(socket.getInputStream())).as("closed by the worker").isTrue();
                }
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
            } finally {
                for (Socket socket : silent) {
                    socket.close();
                }
            }
            assertThat(Long.parseLong(cluster.agent(1).getDebugInfo().get("transport.lanes.refused")))
                    .isGreaterThanOrEqualTo(300);
            assertThat(cluster.agent(1).getDebugInfo()).containsEntry("transport.lanes.accepted_open", "1");
        }
    }

    @Test
    void aClaimedLengthIsNeverAllocatedAndAWrongKeyClosesTheSocket() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::noop, 1)).isEqualTo(1);
            for (int length : new int[] {200 << 20, 16}) {
                try (Socket socket = new Socket("127.0.0.1", lanePort(cluster.agent(1)))) {
                    socket.setSoTimeout(10_000);
                    DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                    out.writeInt(length); // a frame of 200 MiB, or a key of no connection
                    out.write(new byte[16]);
                    out.flush();
                    assertThat(readsToTheEnd(socket.getInputStream())).isTrue();
                }
            }
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::noop, 2)).isEqualTo(2);
        }
    }

    /** Whether the stream ends (or is reset) before the socket's read timeout. */
    private static boolean readsToTheEnd(InputStream in) throws IOException {
        try {
            while (in.read() >= 0) {
                // the worker's authentication hello, then the end
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }
}
