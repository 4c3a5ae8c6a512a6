package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction2;
import dev.ferry.rpc.RpcFunction4;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Protocol messages a faulty or hostile peer could send: each gets a clear error or is ignored
 * (and logged), and the worker goes on.
 */
@Timeout(60)
class RRefProtocolBadInputTest {
    private static final dev.ferry.rpc.RpcFunction0<Boolean> ACK = SystemCalls::ack;
    private static final RpcFunction4<Integer, Long, Integer, Long, Boolean> FORK = SystemCalls::rrefForkRequest;
    private static final RpcFunction2<Integer, Long, Boolean> ACCEPT = SystemCalls::rrefChildAccept;
    private static final RpcFunction2<Integer, Long, RpcFuture<Object>> FETCH = SystemCalls::rrefFetch;

    @Test
    void unknownIdsForksAndDeletesAreRefusedOrIgnored() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            var w0 = cluster.agent(0);
            // a delete for a fork (and an RRef) the owner does not know: ignored
            assertThat(withDeletes(w0, java.nio.ByteBuffer.allocate(28).putInt(1).putInt(1).putLong(12345L)
                    .putInt(0).putLong(777L).array())).isTrue();
            // a malformed delete header: logged and ignored, the call it rode on still runs
            assertThat(withDeletes(w0, new byte[] {0, 0, 0, 9, 1})).isTrue();
            // a child accept for a fork this worker never sent: ignored
            assertThat(w0.rpcSync("worker1", ACCEPT, 0, 4242L)).isTrue();
            // a fetch of an RRef the owner itself would have created, and does not know: clear error
            assertThatThrownBy(() -> w0.rpcSync("worker1", FETCH, 1, 999L))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_RREF);
                        assertThat(e).hasMessageContaining("does not know RRef");
                    });
            // a fork of an RRef that was deleted on its owner: clear error
            RRef<Integer> local = cluster.agent(1).rref(5);
            assertThat(cluster.agent(1).rpcSync("worker0", Ops::identity, local)).isNotNull();
            assertThatThrownBy(() -> w0.rpcSync("worker1", FORK, 1, 10_000L, 0, 1L))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_RREF));
            // the worker is fine
            assertThat(w0.rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
            RRef<Integer> rref = w0.remote("worker1", Ops::add, 2, 2);
            assertThat(rref.toHere(Duration.ofSeconds(10))).isEqualTo(4);
        }
    }

    private static Boolean withDeletes(dev.ferry.rpc.RpcAgent agent, byte[] header) {
        DefaultRpcAgent sender = (DefaultRpcAgent) agent;
        return sender.invokeWithHeaders(sender.directory().byName("worker1"),
                dev.ferry.rpc.internal.serial.FunctionRefs.of(ACK), new Object[0], Duration.ofSeconds(10),
                dev.ferry.rpc.spi.CallHeaders.empty().with(UserDeletes.HEADER, header)).await() == Boolean.TRUE;
    }
}
