package dev.ferry.rpc;

import dev.ferry.rpc.policy.app.AppOps;
import dev.ferry.rpc.policy.app.Greeter;
import dev.ferry.rpc.policy.other.MarkedClass;
import dev.ferry.rpc.policy.other.MarkedMethod;
import dev.ferry.rpc.policy.other.Unmarked;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a worker whose application is one package ({@code dev.ferry.rpc.policy.app}) lets peers
 * call and send, through the public API: the application's code, what {@link RpcCallable} marks,
 * what the options add; and nothing else.
 */
@Timeout(60)
class CallableCodeTest {
    private static final String APPLICATION = "dev.ferry.rpc.policy.app";
    private static LocalCluster cluster;

    @BeforeAll
    static void start() {
        cluster = LocalCluster.start(2, b -> b.applicationPackages(List.of(APPLICATION)));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static RpcAgent caller() {
        return cluster.agent(0);
    }

    private static void refusedAs(Runnable call, String rule) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION);
            assertThat(e).hasMessageContaining("refused (" + rule + ")");
        });
    }

    @Test
    void theApplicationsMethodsConstructorsAndLambdasRun() {
        assertThat(caller().rpcSync("worker1", AppOps::add, 2, 3)).isEqualTo(5);
        assertThat(caller().rpcSync("worker1", AppOps.doubler(), 21)).isEqualTo(42);
        assertThat(caller().rpcSync("worker1", AppOps.jdkThroughLambda(), 41)).isEqualTo(42);
        RpcFunction1<Integer, AppOps> make = AppOps::new;
        assertThat(caller().rpcSync("worker1", make, 9).base()).as("a constructor; its instance travels back").isEqualTo(9);
        refusedAs(() -> caller().rpcSync("worker1", AppOps.secretReference(), 1), "private method");
    }

    @Test
    void codeOutsideTheApplicationRunsOnlyWhereMarked() {
        assertThat(caller().rpcSync("worker1", MarkedClass::greet, "you")).isEqualTo("hello you");
        assertThat(caller().rpcSync("worker1", MarkedClass.negate(), 4)).as("a lambda of a marked class").isEqualTo(-4);
        assertThat(caller().rpcSync("worker1", MarkedMethod::marked, 1)).isEqualTo(101);
        refusedAs(() -> caller().rpcSync("worker1", MarkedMethod::unmarked, 1), "not declared callable");
        refusedAs(() -> caller().rpcSync("worker1", Unmarked::plain, 1), "not declared callable");
        // the tests' Ops sits in dev.ferry.rpc, not in this group's application package
        refusedAs(() -> caller().rpcSync("worker1", Ops::add, 1, 1), "not declared callable");
    }

    @Test
    void rrefProxiesRunTheApplicationsInterfacesOnly() {
        try (RRef<Greeter> greeter = caller().remote("worker1", Greeter::create, "hi")) {
            assertThat(greeter.proxy(Greeter.class).greet("there")).isEqualTo("hi there");
            assertThat(greeter.proxy(Greeter.class).get()).as("inherited from the JDK's Supplier").isEqualTo("hi");
            @SuppressWarnings("unchecked")
            Supplier<String> jdk = greeter.proxy(Supplier.class);
            refusedAs(jdk::get, "JDK class");
            refusedAs(() -> greeter.proxy(Unmarked.Api.class).value(), "not declared callable");
        }
    }

    @Test
    void theOptionsWidenWhatRuns() throws Exception {
        try (LocalCluster widened = LocalCluster.start(2, b -> b.applicationPackages(List.of())
                .allowFunctionPrefix(Unmarked.class.getName()).allowClassPrefix("dev.ferry.rpc.policy.other"))) {
            RpcAgent agent = widened.agent(0);
            assertThat(agent.rpcSync("worker1", Unmarked::plain, 7)).isEqualTo(7);
            refusedAs(() -> agent.rpcSync("worker1", AppOps::add, 1, 1), "not declared callable");
        }
    }

    /**
     * The receiver refuses what its own policy refuses, whatever the sender's allowed: a worker that
     * allows {@code java.net.URI}'s neighbour {@code java.net.URL} sends one to a worker that does not.
     */
    @Test
    void theReceiverRefusesWhatItsPolicyDoesNotAllow() throws Exception {
        try (TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0)) {
            String init = "tcp://127.0.0.1:" + server.address().getPort();
            RpcBackendOptions strict = RpcBackendOptions.builder().initMethod(init).applicationPackage(APPLICATION)
                    .rendezvousTimeout(Duration.ofSeconds(20)).build();
            RpcBackendOptions lax = strict.toBuilder().allowClassPrefix("java.net.URL").build();
            CompletableFuture<RpcAgent> receiver = CompletableFuture.supplyAsync(() -> BackendRegistry.initBackend(
                    BackendType.NETTY, TcpStore.connect("127.0.0.1", server.address().getPort(), Duration.ofSeconds(20)),
                    "receiver", 1, 2, strict));
            RpcAgent sender = BackendRegistry.initBackend(BackendType.NETTY,
                    TcpStore.connect("127.0.0.1", server.address().getPort(), Duration.ofSeconds(20)), "sender", 0, 2, lax);
            RpcAgent strictOne = receiver.get(30, java.util.concurrent.TimeUnit.SECONDS);
            try {
                RpcFunction1<Object, Object> identity = AppOps.identity();
                assertThatThrownBy(() -> sender.rpcSync("receiver", identity, URI.create("http://example.invalid/").toURL()))
                        .isInstanceOfSatisfying(RpcException.class,
                                e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                        .hasMessageContaining("On receiver")
                        .hasMessageContaining("the class policy refuses java.net.URL");
                assertThat(sender.rpcSync("receiver", identity, "fine")).isEqualTo("fine");
            } finally {
                CompletableFuture<Void> other = CompletableFuture.runAsync(() -> strictOne.shutdown(true, Duration.ofSeconds(20)));
                sender.shutdown(true, Duration.ofSeconds(20));
                other.get(30, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
    }
}
