package dev.ferry.rpc;

import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Workers of a group sharing {@link RpcBackendOptions.Builder#authToken}: calls work over every
 * channel (TCP, Unix sockets with shared memory); a worker with another token
 * cannot call into the group nor be called, and learns why.
 */
@Timeout(120)
class AuthenticationTest {
    private static final String TOKEN = "a-secret-of-the-group-0123456789";
    private static final int MIB = 1 << 20;

    @Test
    void aGroupWithATokenCallsOverTcp() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.authToken(TOKEN).transport(TransportTuning.defaults().withUnixSockets(false)))) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.rpcSync("worker1", Ops::add, 2, 3)).isEqualTo(5);
            byte[] large = new byte[9 * MIB];
            large[large.length - 1] = 7;
            byte[] back = (byte[]) w0.rpcSync("worker1", Ops::identity, large);
            assertThat(back).isEqualTo(large);
            assertThat(cluster.agent(1).rpcSync("worker0", Ops::whoAmI)).isEqualTo("worker0");
            assertThat(w0.getDebugInfo()).containsEntry("transport.auth", "hmac-sha256")
                    .containsEntry("transport.auth.rejected", "0");
        }
    }

    @Test
    void aGroupWithATokenCallsOverUnixSocketsAndSharedMemory() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.authToken(TOKEN))) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(2 * MIB).put(0, (byte) 9);
            ByteBuffer back = (ByteBuffer) cluster.agent(0).rpcSync("worker1", Ops::identity, buffer);
            assertThat(back.remaining()).isEqualTo(2 * MIB);
            assertThat(back.get(0)).isEqualTo((byte) 9);
        }
    }

    @Test
    void aWorkerWithAnotherTokenCannotJoinTheGroup() throws Exception {
        try (TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0)) {
            int port = server.address().getPort();
            ExecutorService starter = Executors.newFixedThreadPool(2);
            List<CompletableFuture<RpcAgent>> starting = new ArrayList<>();
            try {
                for (int rank = 0; rank < 2; rank++) {
                    int r = rank;
                    String token = r == 0 ? TOKEN : "another-secret-9876543210";
                    RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:" + port)
                            .rendezvousTimeout(Duration.ofSeconds(5)).rpcTimeout(Duration.ofSeconds(5))
                            .authToken(token).build();
                    starting.add(CompletableFuture.supplyAsync(() -> BackendRegistry.initBackend(BackendType.NETTY,
                            TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(30)), "worker" + r, r, 2, options),
                            starter));
                }
                List<Throwable> failures = new ArrayList<>();
                List<RpcAgent> started = new ArrayList<>();
                for (CompletableFuture<RpcAgent> future : starting) {
                    try {
                        started.add(future.get(60, TimeUnit.SECONDS));
                    } catch (java.util.concurrent.ExecutionException e) {
                        failures.add(e.getCause());
                    }
                }
                // Initialization gathers over RPC: the worker that connects learns it was refused;
                // the other only that its group never completed, and why it may not have.
                for (RpcAgent agent : started) {
                    String other = agent.getWorkerInfo().name().equals("worker0") ? "worker1" : "worker0";
                    try {
                        agent.rpcSync(other, Ops::add, 1, 1);
                        throw new AssertionError(agent.getWorkerInfo().name() + " could call " + other);
                    } catch (RpcException e) {
                        failures.add(e);
                    }
                }
                assertThat(failures).hasSize(2);
                assertThat(failures).anySatisfy(failure -> assertThat(causeChain(failure)).anySatisfy(cause ->
                        assertThat(cause).isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code())
                                .isEqualTo(RpcException.Code.UNAUTHENTICATED))));
                for (Throwable failure : failures) {
                    assertThat(failure).satisfiesAnyOf(
                            f -> assertThat(causeChain(f)).anySatisfy(cause -> assertThat(cause)
                                    .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code())
                                            .isEqualTo(RpcException.Code.UNAUTHENTICATED))),
                            f -> assertThat(f).hasMessageContaining("failed authentication meanwhile"));
                }
                started.forEach(agent -> agent.shutdown(false, Duration.ZERO));
            } finally {
                starter.shutdownNow();
            }
        }
    }

    @Test
    void aGroupThatMeetsThroughATcpStoreAuthenticatesTheStoreToo() throws Exception {
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:" + port)
                .rendezvousTimeout(Duration.ofSeconds(30)).authToken(TOKEN).applicationPackage(LocalCluster.TEST_CODE)
                .build();
        ExecutorService starter = Executors.newFixedThreadPool(2);
        try {
            CompletableFuture<RpcAgent> w0 = CompletableFuture.supplyAsync(
                    () -> RpcAgents.start("worker0", 0, 2, options), starter);
            // A worker without the token cannot even join the store that rank 0 serves.
            RpcBackendOptions tokenless = options.toBuilder().authToken(null).build();
            assertThatThrownBy(() -> RpcAgents.start("worker1", 1, 2, tokenless))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAUTHENTICATED))
                    .hasMessageContaining("requires an authentication token");
            RpcAgent w1 = RpcAgents.start("worker1", 1, 2, options);
            RpcAgent agent0 = w0.get(60, TimeUnit.SECONDS);
            assertThat(agent0.rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
            CompletableFuture<Void> down0 = CompletableFuture.runAsync(agent0::shutdown, starter);
            w1.shutdown();
            down0.get(60, TimeUnit.SECONDS);
        } finally {
            starter.shutdownNow();
        }
    }

    @Test
    void theTokenIsCheckedWhenSetAndNeverPrinted() {
        assertThatThrownBy(() -> RpcBackendOptions.builder().authToken("too-short"))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                .hasMessageContaining("at least 16");
        assertThatThrownBy(() -> RpcBackendOptions.builder().authTimeout(Duration.ZERO))
                .isInstanceOf(RpcException.class).hasMessageContaining("authTimeout");
        RpcBackendOptions options = RpcBackendOptions.builder().authToken(TOKEN).authTimeout(Duration.ofSeconds(3)).build();
        assertThat(options.toBuilder().build().authToken()).isEqualTo(TOKEN);
        assertThat(options.authTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(options.toString()).doesNotContain(TOKEN);
        assertThat(RpcBackendOptions.builder().authToken(null).build().authToken()).isNull();
    }

    private static List<Throwable> causeChain(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
            for (Throwable suppressed : t.getSuppressed()) {
                chain.add(suppressed);
            }
        }
        return chain;
    }
}
