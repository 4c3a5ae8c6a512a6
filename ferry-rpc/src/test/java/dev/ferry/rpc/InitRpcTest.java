package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class InitRpcTest {
    @TempDir
    Path dir;

    private RpcBackendOptions fileOptions(String file) {
        return RpcBackendOptions.builder().initMethod("file://" + dir.resolve(file)).rendezvousTimeout(Duration.ofSeconds(20))
                .applicationPackage(LocalCluster.TEST_CODE).build();
    }

    /** Starts the given workers concurrently; each result is the agent or the exception. */
    private List<Object> startAll(List<Supplier<RpcAgent>> workers) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(workers.size());
        try {
            List<CompletableFuture<Object>> started = new ArrayList<>();
            for (Supplier<RpcAgent> worker : workers) {
                started.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return worker.get();
                    } catch (RuntimeException e) {
                        return e;
                    }
                }, pool));
            }
            List<Object> results = new ArrayList<>();
            for (CompletableFuture<Object> future : started) {
                results.add(future.get(40, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void shutdownAll(List<Object> results) {
        List<RpcAgent> agents = results.stream().filter(RpcAgent.class::isInstance).map(RpcAgent.class::cast).toList();
        agents.parallelStream().forEach(RpcAgent::shutdown);
    }

    @Test
    void fileInitMethodFormsAGroup() throws Exception {
        RpcBackendOptions options = fileOptions("group");
        List<Object> results = startAll(List.of(
                () -> RpcAgents.start("alice", 0, 2, options),
                () -> RpcAgents.start("bob", 1, 2, options)));
        try {
            RpcAgent alice = (RpcAgent) results.get(0);
            assertThat(alice.rpcSync("bob", Ops::whoAmI)).isEqualTo("bob");
            assertThat(alice.getWorkerInfos()).extracting(WorkerInfo::name).containsExactly("alice", "bob");
            assertThat(dir.resolve("group")).exists();
        } finally {
            shutdownAll(results);
        }
        // as c10d's FileStore(path, world_size): the last worker to leave deletes the file
        assertThat(dir.resolve("group")).doesNotExist();
    }

    @Test
    void worldSizeOneCallsItself() {
        try (RpcAgent me = RpcAgents.start("me", 0, 1, fileOptions("alone"))) {
            assertThat(me.rpcSync("me", Ops::add, 2, 3)).isEqualTo(5);
        }
    }

    @Test
    void envInitMethodReadsRankWorldSizeAndMaster() throws Exception {
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        RpcBackendOptions options = RpcBackendOptions.builder().rendezvousTimeout(Duration.ofSeconds(20)).build();
        // as ferry run sets them; FERRY_APPLICATION_PACKAGES declares the application's code
        Map<String, String> env0 = Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(port),
                "RANK", "0", "WORLD_SIZE", "2", "FERRY_APPLICATION_PACKAGES", "com.example,dev.ferry.rpc");
        Map<String, String> env1 = Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(port),
                "RANK", "1", "WORLD_SIZE", "2", "FERRY_APPLICATION_PACKAGES", "com.example,dev.ferry.rpc");
        List<Object> results = startAll(List.of(
                () -> RpcAgents.start("w0", BackendType.NETTY, -1, -1, options, env0),
                () -> RpcAgents.start("w1", BackendType.NETTY, -1, -1, options, env1)));
        try {
            assertThat(((RpcAgent) results.get(1)).getWorkerInfo()).isEqualTo(new WorkerInfo("w1", 1));
            assertThat(((RpcAgent) results.get(0)).rpcSync("w1", Ops::add, 1, 1)).isEqualTo(2);
        } finally {
            shutdownAll(results);
        }
    }

    @Test
    void envInitMethodWithoutRankIsAClearError() {
        assertThatThrownBy(() -> RpcAgents.start("w0", BackendType.NETTY, -1, 2, RpcBackendOptions.defaults(),
                Map.of("MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "1")))
                .isInstanceOf(RpcException.class).hasMessageContaining("RANK");
    }

    @Test
    void badNamesAreRejected() {
        RpcBackendOptions options = fileOptions("names");
        for (String bad : List.of("", "has space", "semi;colon", "x".repeat(128))) {
            assertThatThrownBy(() -> RpcAgents.start(bad, 0, 1, options))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT));
        }
        assertThat(RpcAgents.start("ok_name:1-" + "x".repeat(100), 0, 1, options).isRunning()).isTrue();
    }

    @Test
    void rankOutOfRangeIsRejected() {
        assertThatThrownBy(() -> RpcAgents.start("w", 2, 2, fileOptions("range")))
                .isInstanceOf(RpcException.class).hasMessageContaining("rank 2 is out of range for world size 2");
        assertThatThrownBy(() -> RpcAgents.start("w", -5, 2, fileOptions("range")))
                .isInstanceOf(RpcException.class);
    }

    @Test
    void duplicateNamesFailEveryWorker() throws Exception {
        RpcBackendOptions options = fileOptions("dup-names");
        List<Object> results = startAll(List.of(
                () -> RpcAgents.start("same", 0, 2, options),
                () -> RpcAgents.start("same", 1, 2, options)));
        shutdownAll(results);
        for (Object result : results) {
            assertThat(result).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.RENDEZVOUS_FAILED);
                assertThat(e).hasMessageContaining("RPC worker name same is not unique. Workers 0 and 1 share the same name.");
            });
        }
    }

    @Test
    void duplicateRanksFailEveryWorker() throws Exception {
        RpcBackendOptions options = fileOptions("dup-ranks");
        List<Object> results = startAll(List.of(
                () -> RpcAgents.start("a", 1, 2, options),
                () -> RpcAgents.start("b", 1, 2, options)));
        shutdownAll(results);
        for (Object result : results) {
            assertThat(result).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e).hasMessageContaining("rank 1 is not unique"));
        }
    }

    @Test
    void rendezvousTimeoutNamesTheMissingRanks() throws Exception {
        RpcBackendOptions options = fileOptions("missing").toBuilder().rendezvousTimeout(Duration.ofSeconds(1)).build();
        List<Object> results = startAll(List.of(
                () -> RpcAgents.start("w0", 0, 4, options),
                () -> RpcAgents.start("w2", 2, 4, options)));
        for (Object result : results) {
            assertThat(result).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.RENDEZVOUS_FAILED);
                assertThat(e).hasMessageContaining("rendezvous of 4 workers did not complete within 1 s: ranks [1, 3]"
                        + " never arrived");
            });
        }
    }

    @Test
    void staticFacadeLifecycle() {
        assertThatThrownBy(() -> Rpc.rpcSync("me", Ops::add, 1, 2)).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e).hasMessageStartingWith("RPC has not been initialized"));
        assertThat(Rpc.isInitialized()).isFalse();
        Rpc.initRpc("me", BackendType.NETTY, 0, 1, fileOptions("facade-1"));
        try {
            assertThat(Rpc.isInitialized()).isTrue();
            assertThat(Rpc.rpcSync("me", Ops::add, 1, 2)).isEqualTo(3);
            assertThatThrownBy(() -> Rpc.initRpc("again", BackendType.NETTY, 0, 1, fileOptions("facade-2")))
                    .isInstanceOf(RpcException.class).hasMessageContaining("already initialized");
        } finally {
            Rpc.shutdown();
        }
        assertThatThrownBy(() -> Rpc.rpcSync("me", Ops::add, 1, 2)).hasMessageStartingWith("RPC has not been initialized");
        // shutting down again is as harmless as the agent's own second shutdown
        Rpc.shutdown();
        Rpc.shutdown(false, Duration.ZERO);
        assertThat(Rpc.isInitialized()).isFalse();
        // a new initialization after a complete shutdown works
        Rpc.initRpc("me2", BackendType.NETTY, 0, 1, fileOptions("facade-3"));
        try {
            assertThat(Rpc.rpcSync("me2", Ops::whoAmI)).isEqualTo("me2");
        } finally {
            Rpc.shutdown();
        }
    }
}
