package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A worker without a token says once that its group is unauthenticated, and listens on nothing but
 * loopback unless the application opts in; with a token or TLS it says nothing and listens anywhere.
 */
@Timeout(60)
class NetworkExposureTest {
    private static final String TOKEN = "a-token-of-the-group-0123456789";
    private static final String WARNING = "this group is not authenticated";

    @TempDir
    Path dir;

    private RpcBackendOptions.Builder alone(String file) {
        return RpcBackendOptions.builder().initMethod("file://" + dir.resolve(file))
                .rendezvousTimeout(Duration.ofSeconds(20)).applicationPackage(LocalCluster.TEST_CODE);
    }

    /** What the worker logged (slf4j-simple writes to the current {@code System.err}) while {@code start} ran. */
    private static String loggedWhile(Supplier<RpcAgent> start) {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        RpcAgent agent = null;
        try {
            agent = start.get();
            assertThat(agent.rpcSync(agent.getWorkerInfo().name(), Ops::add, 1, 2)).isEqualTo(3);
        } finally {
            System.setErr(original);
            if (agent != null) {
                agent.shutdown();
            }
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void withoutATokenTheWorkerWarnsOnce() {
        String logged = loggedWhile(() -> RpcAgents.start("alone", 0, 1, alone("no-token").build()));
        assertThat(logged.split(WARNING, -1)).as("one warning").hasSize(2);
        assertThat(logged).contains("FERRY_AUTH_TOKEN", "ferry run sets a fresh one");
        assertThat(loggedWhile(() -> RpcAgents.start("alone", 0, 1, alone("token").authToken(TOKEN).build())))
                .doesNotContain(WARNING);
    }

    @Test
    void aNonLoopbackAddressNeedsATokenTlsOrConsent() {
        RpcBackendOptions open = alone("open").listenHost("0.0.0.0").build();
        assertThatThrownBy(() -> RpcAgents.start("open", 0, 1, open)).isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("would listen on 0.0.0.0, which is not a loopback address")
                .hasMessageContaining("allowUnauthenticatedNetwork(true)");
        assertThat(loggedWhile(() -> RpcAgents.start("consenting", 0, 1,
                alone("consenting").listenHost("0.0.0.0").allowUnauthenticatedNetwork(true).build()))).contains(WARNING);
        loggedWhile(() -> RpcAgents.start("holder", 0, 1, alone("holder").listenHost("0.0.0.0").authToken(TOKEN).build()));
    }

    @Test
    void rankZerosStoreOnANonLoopbackAddressNeedsATokenTlsOrConsent() throws Exception {
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        RpcBackendOptions store = alone("unused").initMethod("tcp://0.0.0.0:" + port).build();
        assertThatThrownBy(() -> RpcAgents.start("rank0", 0, 1, store)).isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("rank 0's rendezvous store would listen on 0.0.0.0");
        loggedWhile(() -> RpcAgents.start("rank0", 0, 1, store.toBuilder().authToken(TOKEN).build()));
    }
}
