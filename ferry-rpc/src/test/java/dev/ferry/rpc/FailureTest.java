package dev.ferry.rpc;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.HeaderKey;
import dev.ferry.rpc.testing.LocalCluster;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad input and dead peers fail the call or the connection concerned, and nothing else. */
@Timeout(60)
class FailureTest {
    record Secret(String value) {
    }

    @Test
    void deadPeerFailsCallsPromptlyAndOthersGoOn() {
        try (LocalCluster cluster = LocalCluster.start(3, b -> b.rpcTimeout(Duration.ofSeconds(60)))) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.rpcSync("worker2", Ops::noop, 1)).isEqualTo(1);
            RpcFuture<Long> inFlight = w0.rpcAsync("worker2", Ops::sleepMillis, 30_000L);
            cluster.agent(2).shutdown(false, Duration.ZERO); // worker2 dies
            // fails long before the 60 s timeout, with an unavailable-peer error
            assertThatThrownBy(() -> inFlight.await(Duration.ofSeconds(10))).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE));
            assertThatThrownBy(() -> w0.rpcAsync("worker2", Ops::noop, 2).await(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE));
            assertThat(w0.rpcSync("worker1", Ops::noop, 3)).isEqualTo(3);
            assertThat(cluster.agent(1).rpcSync("worker0", Ops::noop, 4)).isEqualTo(4);
            cluster.agent(0).shutdown(false, Duration.ZERO);
            cluster.agent(1).shutdown(false, Duration.ZERO);
        }
    }

    @Test
    void jdkMethodsMayNotBeCalledRemotely() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcFunction1<String, String> property = System::getProperty;
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", property, "user.home"))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION);
                        assertThat(e).hasMessageContaining("refused (JDK class): java.lang.System");
                    });
            RpcFunction2<Integer, Integer, Integer> addExact = Math::addExact;
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", addExact, 3, 4))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION));
            // the way to use it: from the application's own code
            int sum = cluster.agent(0).rpcSync("worker1", (Integer a, Integer b) -> Math.addExact(a, b), 3, 4);
            assertThat(sum).isEqualTo(7);
        }
    }

    @Test
    void functionsOutsideTheApplicationsPackagesAreRefused() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.applicationPackages(java.util.List.of("com.example")))) {
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::noop, 1))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION);
                        assertThat(e).hasMessageContaining("refused (not declared callable)");
                    });
        }
    }

    @Test
    void classesOutsideTheAllowedPackagesAreRefusedAndTheWorkerGoesOn() {
        try (LocalCluster cluster = LocalCluster.start(2,
                b -> b.applicationPackages(java.util.List.of(Ops.class.getName())))) {
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::identity, new Secret("x")))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR));
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::identity, java.util.List.of(1, 2)))
                    .isEqualTo(java.util.List.of(1, 2));
        }
    }

    @Test
    void oversizedMessageFailsOnlyThatCall() {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.maxMessageBytes(64 * 1024))) {
            byte[] big = new byte[256 * 1024];
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::identity, big))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
                        assertThat(e).hasMessageContaining("exceeds the maximum message size");
                    });
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::noop, 5)).isEqualTo(5);
        }
    }

    @Test
    void garbageOnTheWireClosesOnlyThatConnection() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            String address = cluster.agent(1).getDebugInfo().get("agent.address");
            int port = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
            try (Socket socket = new Socket("127.0.0.1", port)) {
                OutputStream out = socket.getOutputStream();
                out.write(new byte[] {0, 0, 0, 12, 9, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8});
                out.flush();
                socket.setSoTimeout(10_000);
                assertThat(socket.getInputStream().read()).isEqualTo(-1); // closed by the worker
            }
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.getOutputStream().write(new byte[] {(byte) 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff});
                socket.setSoTimeout(10_000);
                assertThat(socket.getInputStream().read()).isEqualTo(-1); // oversized frame: closed
            }
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::noop, 6)).isEqualTo(6);
        }
    }

    @Test
    void interceptorsCarryHeadersBothWays() {
        HeaderKey<Long> context = HeaderKey.ofLong("test-context");
        ThreadLocal<Long> seen = new ThreadLocal<>();
        CallInterceptor interceptor = new CallInterceptor() {
            @Override
            public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
                return call.function().endsWith("::headerValue") ? headers.with(context, 42L) : headers;
            }

            @Override
            public Scope onHandlerStart(CallInfo call, CallHeaders headers) {
                Long value = headers.get(context);
                Interceptors.CURRENT.set(value);
                return Interceptors.CURRENT::remove;
            }

            @Override
            public CallHeaders beforeSendResponse(CallInfo call, Object result, CallHeaders requestHeaders,
                                                  CallHeaders responseHeaders) {
                return requestHeaders.contains(context) ? responseHeaders.with(context, 7L) : responseHeaders;
            }

            @Override
            public Object afterReceiveResponse(CallInfo call, Object result, CallHeaders responseHeaders) {
                Long reply = responseHeaders.get(context);
                return reply == null ? result : ((Long) result) + reply;
            }
        };
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.addInterceptor(interceptor))) {
            long value = cluster.agent(0).rpcSync("worker1", Interceptors::headerValue);
            assertThat(value).isEqualTo(42L + 7L);
            assertThat(seen.get()).isNull();
        }
    }

    /** What the test interceptor exposes to the function it wraps. */
    public static final class Interceptors {
        static final ThreadLocal<Long> CURRENT = new ThreadLocal<>();

        public static Long headerValue() {
            return CURRENT.get();
        }
    }

    @Test
    void defaultTimeoutCanBeChangedAndZeroMeansNone() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcAgent w0 = cluster.agent(0);
            assertThat(w0.getRpcTimeout()).isEqualTo(Duration.ofSeconds(60));
            w0.setRpcTimeout(Duration.ofMillis(100));
            assertThat(w0.getRpcTimeout()).isEqualTo(Duration.ofMillis(100));
            assertThatThrownBy(() -> w0.rpcSync("worker1", Ops::sleepMillis, 2_000L))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT);
                        assertThat(e).hasMessageContaining("RPC ran for more than set timeout (100 ms)");
                    });
            assertThat(w0.to(1).withTimeout(Duration.ZERO).rpcSync(Ops::sleepMillis, 300L)).isEqualTo(300L);
            w0.setRpcTimeout(Duration.ZERO);
            assertThat(w0.rpcSync("worker1", Ops::sleepMillis, 200L)).isEqualTo(200L);
            assertThatThrownBy(() -> w0.setRpcTimeout(Duration.ofSeconds(-1))).isInstanceOf(RpcException.class);
            // A negative per-call timeout is a mistake, refused before anything is sent, on every call kind.
            for (ThrowingCallable negative : List.<ThrowingCallable>of(
                    () -> w0.to(1).withTimeout(Duration.ofMillis(-1)).rpcSync(Ops::sleepMillis, 1L),
                    () -> w0.to(1).withTimeout(Duration.ofMillis(-1)).rpcAsync(Ops::sleepMillis, 1L),
                    () -> w0.to(1).withTimeout(Duration.ofMillis(-1)).remote(Ops::sleepMillis, 1L).toHere())) {
                assertThatThrownBy(negative).isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.INVALID_ARGUMENT))
                        .hasMessageContaining("a call's timeout must be zero (no timeout) or positive, got -1 ms");
            }
            assertThat(w0.rpcSync("worker1", Ops::sleepMillis, 1L)).isEqualTo(1L);
        }
    }
}
