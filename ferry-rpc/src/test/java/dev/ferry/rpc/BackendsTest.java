package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The backend registry (PyTorch's {@code backend_registry}) and backend option handlers. */
@Timeout(60)
class BackendsTest {
    @TempDir
    Path dir;

    /** A backend's own options type, as a custom backend would have. */
    record StubOptions(String initMethod, Duration rpcTimeout, int flavour) implements BackendOptions {
    }

    private static String unique(String prefix) {
        return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8).toUpperCase();
    }

    private RpcBackendOptions fileOptions(String file) {
        return RpcBackendOptions.builder().initMethod("file://" + dir.resolve(file))
                .rendezvousTimeout(Duration.ofSeconds(20)).applicationPackage(LocalCluster.TEST_CODE).build();
    }

    @Test
    void builtInBackendsAreRegistered() {
        assertThat(BackendType.NETTY).hasToString("BackendType.NETTY");
        assertThat(BackendType.TENSORPIPE).isEqualTo(BackendType.NETTY);
        assertThat(BackendType.valueOf("TENSORPIPE")).isEqualTo(BackendType.NETTY);
        assertThat(BackendType.valueOf("IN_PROCESS")).isEqualTo(BackendType.IN_PROCESS).hasToString("BackendType.IN_PROCESS");
        assertThat(BackendRegistry.backendRegistered("NETTY")).isTrue();
        assertThat(BackendRegistry.backendRegistered("TENSORPIPE")).isTrue();
        assertThat(BackendRegistry.backendRegistered("IN_PROCESS")).isTrue();
        assertThat(BackendRegistry.backendRegistered("NO_SUCH_BACKEND")).isFalse();
        assertThat(BackendType.values()).startsWith(BackendType.NETTY, BackendType.IN_PROCESS).doesNotHaveDuplicates();
        assertThatThrownBy(() -> BackendType.valueOf("NO_SUCH_BACKEND")).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT));
    }

    @Test
    void registeringANameTwiceIsAClearError() {
        String name = unique("TWICE");
        BackendType first = BackendRegistry.registerBackend(name, BackendsTest::stubOptions, BackendsTest::neverStarts);
        assertThat(first.name()).isEqualTo(name);
        assertThat(BackendRegistry.backendRegistered(name)).isTrue();
        assertThat(BackendType.valueOf(name)).isEqualTo(first);
        assertThat(BackendType.values()).contains(first);
        for (String taken : List.of(name, "NETTY", "TENSORPIPE", "IN_PROCESS")) {
            assertThatThrownBy(() -> BackendRegistry.registerBackend(taken, BackendsTest::stubOptions,
                    BackendsTest::neverStarts))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT);
                        assertThat(e.getMessage()).matches("^RPC backend .+: already registered$");
                    });
        }
        assertThat(BackendType.valueOf(name).value().initBackendHandler()).isSameAs(first.value().initBackendHandler());
    }

    @Test
    void customBackendDecoratesTheDefaultAgentAndInitRpcUsesIt() {
        AtomicInteger calls = new AtomicInteger();
        BackendType counting = BackendRegistry.registerBackend(unique("COUNTING"),
                (timeout, initMethod, extra) -> BackendRegistry.constructRpcBackendOptions(BackendType.NETTY, timeout,
                        initMethod, extra),
                (store, name, rank, worldSize, options) -> counting(calls,
                        BackendRegistry.initBackend(BackendType.NETTY, store, name, rank, worldSize, options)));
        RpcAgent agent = Rpc.initRpc("solo", counting, 0, 1, fileOptions("counting"));
        try {
            assertThat(Rpc.current()).isSameAs(agent);
            assertThat(Rpc.rpcSync("solo", Ops::add, 1, 2)).isEqualTo(3);
            assertThat(Rpc.rpcAsync("solo", Ops::whoAmI).await()).isEqualTo("solo");
            assertThat(agent.to(0).rpcSync(Ops::add, 2, 2)).isEqualTo(4);
            assertThat(calls).hasValue(3);
        } finally {
            Rpc.shutdown();
        }
        assertThat(agent.isRunning()).isFalse();
    }

    @Test
    void customBackendWithItsOwnOptionsType() {
        BackendType stub = BackendRegistry.registerBackend(unique("STUB"), BackendsTest::stubOptions,
                (store, name, rank, worldSize, options) -> {
                    StubOptions own = (StubOptions) options;
                    RpcBackendOptions builtIn = RpcBackendOptions.builder().initMethod(own.initMethod())
                            .rpcTimeout(own.rpcTimeout()).numWorkerThreads(own.flavour())
                            .applicationPackage(LocalCluster.TEST_CODE).build();
                    return BackendRegistry.initBackend(BackendType.IN_PROCESS, store, name, rank, worldSize, builtIn);
                });
        BackendOptions options = BackendRegistry.constructRpcBackendOptions(stub, Duration.ofSeconds(20),
                "file://" + dir.resolve("stub"), Map.of("flavour", 3));
        assertThat(options).isEqualTo(new StubOptions("file://" + dir.resolve("stub"), Duration.ofSeconds(20), 3));
        try (RpcAgent agent = RpcAgents.start("w", stub, 0, 1, options)) {
            assertThat(agent.rpcSync("w", Ops::concat, "a", "b")).isEqualTo("ab");
            assertThat(agent.getDebugInfo()).containsEntry("agent.num_worker_threads", "3")
                    .containsEntry("agent.transport", "in-process");
        }
        // A built-in backend refuses options it cannot read, and options alone do not name a backend.
        assertThatThrownBy(() -> RpcAgents.start("w", BackendType.NETTY, 0, 1,
                BackendRegistry.constructRpcBackendOptions(stub, Duration.ofSeconds(20), "file://" + dir.resolve("s2"))))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT);
                    assertThat(e).hasMessageContaining("`rpcBackendOptions` must be a RpcBackendOptions");
                });
        assertThatThrownBy(() -> RpcAgents.start("w", 0, 1, options)).isInstanceOf(RpcException.class)
                .hasMessageContaining("Could not infer backend for options");
        assertThatThrownBy(() -> Rpc.initRpc("w", 0, 1, options)).hasMessageContaining("Could not infer backend");
        assertThat(Rpc.isInitialized()).isFalse();
    }

    @Test
    void defaultBackendOptionsFromTheRegistry() {
        RpcBackendOptions defaults = (RpcBackendOptions) BackendRegistry.constructRpcBackendOptions(BackendType.TENSORPIPE);
        assertThat(defaults.rpcTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(defaults.initMethod()).isEqualTo("env://");
        assertThat(defaults.numWorkerThreads()).isEqualTo(16);
        assertThat(defaults.deviceMaps()).isEmpty();
        assertThat(defaults.devices()).isEmpty();

        RpcBackendOptions custom = (RpcBackendOptions) BackendRegistry.constructRpcBackendOptions(BackendType.NETTY,
                Duration.ofSeconds(5), "tcp://127.0.0.1:1", Map.of("numWorkerThreads", 27, "somethingElse", "ignored",
                        "deviceMaps", Map.of("worker1", Map.of("cpu", "cpu")), "devices", List.of("cpu")));
        assertThat(custom.rpcTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(custom.initMethod()).isEqualTo("tcp://127.0.0.1:1");
        assertThat(custom.numWorkerThreads()).isEqualTo(27);
        assertThat(custom.deviceMaps()).isEqualTo(Map.of("worker1", Map.of("cpu", "cpu")));
        assertThat(custom.devices()).containsExactly("cpu");
        assertThatThrownBy(() -> BackendRegistry.constructRpcBackendOptions(BackendType.NETTY, Duration.ofSeconds(5),
                "env://", Map.of("numWorkerThreads", "many")))
                .isInstanceOf(RpcException.class).hasMessageContaining("numWorkerThreads must be a Integer");
        assertThatThrownBy(() -> BackendRegistry.constructRpcBackendOptions(BackendType.NETTY, Duration.ofSeconds(5),
                "env://", Map.of("numWorkerThreads", 0))).hasMessageContaining("numWorkerThreads must be at least 1");
        assertThatThrownBy(() -> BackendRegistry.constructRpcBackendOptions(BackendType.NETTY, Duration.ofSeconds(-1),
                "env://")).hasMessageContaining("rpcTimeout must not be negative");
    }

    @Test
    void numWorkerThreadsReachesTheAgent() {
        try (RpcAgent agent = RpcAgents.start("w", 0, 1, fileOptions("threads").toBuilder().numWorkerThreads(27)
                .rpcTimeout(Duration.ofSeconds(100)).build())) {
            assertThat(agent.getDebugInfo()).containsEntry("agent.num_worker_threads", "27");
            assertThat(agent.getRpcTimeout()).isEqualTo(Duration.ofSeconds(100));
        }
    }

    private static StubOptions stubOptions(Duration timeout, String initMethod, Map<String, ?> extra) {
        Object flavour = extra.get("flavour");
        return new StubOptions(initMethod, timeout, flavour == null ? 1 : (Integer) flavour);
    }

    private static RpcAgent neverStarts(dev.ferry.rpc.store.Store store, String name, int rank, int worldSize,
                                        BackendOptions options) {
        throw new AssertionError("not started in this test");
    }

    /** The agent, with every call it makes counted: a decorator a custom backend might add. */
    private static RpcAgent counting(AtomicInteger calls, RpcAgent agent) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.isDefault()) {
                // to(...), rpcSync(...) and friends: through the proxy, so their calls are counted
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            if (method.getName().equals("invoke")) {
                calls.incrementAndGet();
            }
            try {
                return method.invoke(agent, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (RpcAgent) Proxy.newProxyInstance(RpcAgent.class.getClassLoader(), new Class<?>[] {RpcAgent.class},
                handler);
    }
}
