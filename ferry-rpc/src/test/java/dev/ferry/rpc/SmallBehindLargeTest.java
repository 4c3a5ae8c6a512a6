package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Small messages do not wait behind large ones, on any route: while 128 MiB echoes are in flight
 * between two workers, small calls of every kind between the same two (rpcSync,
 * rpcAsync(...).await(), remote() then toHere(), calls on an RRef's value, and calls the other
 * way) overtake them. Progress and order only; how long the small calls take is ferry-bench's W8.
 */
@Timeout(180)
class SmallBehindLargeTest {
    /**
     * Starts a 128 MiB echo, makes one small call while it is in flight, and returns whether the
     * small call came back first, after checking the echo's value.
     */
    private static boolean overtakes(RpcAgent caller, ByteBuffer large, Supplier<Integer> smallCall) {
        RpcFuture<Object> echo = caller.rpcAsync("worker1", Ops::identity, (Object) large);
        assertThat(smallCall.get()).isPositive();
        boolean first = !echo.done();
        assertThat((ByteBuffer) echo.await()).isEqualTo(large);
        return first;
    }

    /**
     * Returns {@code kind} if one of a few small calls overtook the echo it followed. A loaded
     * machine may deschedule the caller until an echo is over, which says nothing about the
     * transport; a small call queued behind a large frame never overtakes it.
     */
    private static String overtakesOnce(RpcAgent caller, ByteBuffer large, String kind, Supplier<Integer> smallCall) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            if (overtakes(caller, large, smallCall)) {
                return kind;
            }
        }
        return kind + " never overtook";
    }

    private static final int ATTEMPTS = 4;

    private static final int LARGE = 128 << 20;

    /** The routes between two workers of one host. */
    enum Route {
        TCP(b -> b.transport(TransportTuning.defaults().withUnixSockets(false))),
        UNIX_SOCKET(b -> b.transport(TransportTuning.defaults().withSharedMemoryBytes(0))),
        UNIX_SOCKET_AND_SHARED_MEMORY(b -> b),
        IN_PROCESS(b -> b);

        final UnaryOperator<RpcBackendOptions.Builder> options;

        Route(UnaryOperator<RpcBackendOptions.Builder> options) {
            this.options = options;
        }
    }

    @ParameterizedTest
    @EnumSource(Route.class)
    void smallCallsOfEveryKindOvertakeLargeEchoes(Route route) {
        BackendType backend = route == Route.IN_PROCESS ? BackendType.IN_PROCESS : BackendType.NETTY;
        try (LocalCluster cluster = LocalCluster.start(2, backend, route.options)) {
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            ByteBuffer large = ByteBuffer.allocateDirect(LARGE);
            for (int i = 0; i < LARGE; i += 4096) {
                large.put(i, (byte) i);
            }
            RRef<Counter> counter = w0.to(1).remote(Counter::new, 0);
            assertThat(w0.rpcSync("worker1", Ops::noop, 0)).isEqualTo(0); // connections up, lanes opening
            w0.rpcSync("worker1", Ops::identity, (Object) large); // and the large path warm
            List<String> overtook = new ArrayList<>();
            overtook.add(overtakesOnce(w0, large, "rpcSync", () -> w0.rpcSync("worker1", Ops::noop, 1)));
            overtook.add(overtakesOnce(w0, large, "rpcAsync.await",
                    () -> w0.<Integer, Integer>rpcAsync("worker1", Ops::noop, 2).await()));
            overtook.add(overtakesOnce(w0, large, "remote.toHere", () -> w0.remote("worker1", Ops::noop, 3).toHere()));
            overtook.add(overtakesOnce(w0, large, "rref.rpcSync", () -> counter.rpcSync(Counter::add, 1)));
            overtook.add(overtakesOnce(w0, large, "the other way",
                    () -> w1.<Integer, Integer>rpcAsync("worker0", Ops::noop, 4).await()));
            assertThat(overtook).as("small calls that returned while a 128 MiB echo was in flight")
                    .containsExactly("rpcSync", "rpcAsync.await", "remote.toHere", "rref.rpcSync", "the other way");
        }
    }
}
