package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.TransportTuning;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.serial.FunctionRefs;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The headers that steer how a call runs ({@code ferry-inline}: on the transport thread that read
 * it; {@code ferry-system}: Ferry's own, not counted as the application's work) mean something on
 * Ferry's system calls only. A peer that sends them on its own calls does not choose their thread.
 */
@Timeout(60)
class SteeringHeadersTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int HELD = 4;
    private static volatile CountDownLatch entered = new CountDownLatch(0);
    private static volatile CountDownLatch release = new CountDownLatch(0);

    /** Blocks until released, then says whether it ran on a transport thread. */
    public static String blockedWhere(int x) throws InterruptedException {
        entered.countDown();
        boolean released = release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        return (NonBlockingThreads.currentIsNonBlocking() ? "transport" : "request") + (released ? "" : ", never released");
    }

    private static final RpcFunction1<Integer, String> BLOCKED = SteeringHeadersTest::blockedWhere;

    @Test
    void anInlineHeaderOnAUserCallRunsItOnARequestThreadAndDelaysNoOne() throws Exception {
        entered = new CountDownLatch(HELD);
        release = new CountDownLatch(1);
        // one transport thread each: a call run on it would hold every connection of the worker
        try (LocalCluster cluster = LocalCluster.start(3, b -> b.transport(TransportTuning.defaults().withIoThreads(1)))) {
            DefaultRpcAgent attacker = (DefaultRpcAgent) cluster.agent(0);
            WorkerInfo victim = attacker.getWorkerInfo("worker1");
            FunctionRef blocked = FunctionRefs.of(BLOCKED);
            CallHeaders inline = CallHeaders.empty().with(SystemCalls.INLINE, "1");
            List<RpcFuture<String>> held = new ArrayList<>();
            try {
                for (int i = 0; i < HELD; i++) {
                    held.add(attacker.invokeWithHeaders(victim, blocked, new Object[] {i}, WAIT, inline));
                }
                assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("all four run at once").isTrue();
                // while all four block, another caller's call, and the attacker's own, are answered
                RpcFuture<Integer> other = cluster.agent(2).rpcAsync("worker1", Ops::add, 1, 2);
                assertThat(other.await(WAIT)).isEqualTo(3);
                RpcFuture<Integer> own = attacker.rpcAsync("worker1", Ops::add, 3, 4);
                assertThat(own.await(WAIT)).isEqualTo(7);
            } finally {
                release.countDown();
            }
            for (RpcFuture<String> call : held) {
                assertThat(call.await(WAIT)).isEqualTo("request");
            }
        }
    }

    @Test
    void theSystemMarkerOnAUserCallIsRefused() {
        release = new CountDownLatch(0);
        try (LocalCluster cluster = LocalCluster.start(2)) {
            DefaultRpcAgent attacker = (DefaultRpcAgent) cluster.agent(0);
            WorkerInfo victim = attacker.getWorkerInfo("worker1");
            for (CallHeaders headers : List.of(CallHeaders.empty().with(SystemCalls.MARKER, "1"),
                    CallHeaders.empty().with(SystemCalls.MARKER, "1").with(SystemCalls.INLINE, "1"))) {
                assertThatThrownBy(() -> attacker.invokeWithHeaders(victim, FunctionRefs.of(BLOCKED), new Object[] {1},
                        WAIT, headers).await(WAIT))
                        .isInstanceOfSatisfying(RpcException.class,
                                e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR))
                        .hasMessageContaining("the ferry-system header marks Ferry's own calls");
            }
            RpcFuture<Integer> fine = attacker.rpcAsync("worker1", Ops::add, 1, 1);
            assertThat(fine.await(WAIT)).isEqualTo(2);
        }
    }
}
