package dev.ferry.rpc;

import dev.ferry.rpc.internal.concurrent.NonBlockingThreads;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Functions marked {@link DirectExecution} run on the transport thread that read their request when
 * the call came alone and small, and on a request thread otherwise; waiting there fails clearly.
 * The calls here are {@code rpcAsync} awaited at once: an {@code rpcSync} takes a
 * synchronous-exchange lane once one is open, and runs on the callee's lane thread
 * ({@link SyncLanesTest}).
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DirectExecutionTest {
    private static volatile CountDownLatch gate = new CountDownLatch(0);
    private LocalCluster cluster;

    /** Where it ran: "transport" or "request", and as which worker (the static facade's agent). */
    @DirectExecution
    public static String where(int x) {
        return (NonBlockingThreads.currentIsNonBlocking() ? "transport" : "request") + "@" + Rpc.getWorkerInfo().name();
    }

    /** The same, not marked. */
    public static String wherePlain(int x) {
        return (NonBlockingThreads.currentIsNonBlocking() ? "transport" : "request") + "@" + Rpc.getWorkerInfo().name();
    }

    @DirectExecution
    public static String whereBig(byte[] data) {
        return NonBlockingThreads.currentIsNonBlocking() ? "transport" : "request";
    }

    /** Breaks the contract: waits for a nested call. */
    @DirectExecution
    public static int waitsForANestedCall(int x) {
        return Rpc.rpcSync("worker0", Ops::add, x, 1);
    }

    /** Keeps the contract: chains the nested call and returns its future. */
    @DirectExecution
    @AsyncExecution
    public static RpcFuture<String> chainsANestedCall(int x) {
        boolean transport = NonBlockingThreads.currentIsNonBlocking();
        return Rpc.<Integer, Integer, Integer>rpcAsync("worker0", Ops::add, x, 1)
                .then(f -> f.value() * 2 + (transport ? "@transport" : "@request"));
    }

    /** Holds a call in flight until the gate opens (bounded). */
    public static int gated(int x) throws InterruptedException {
        if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the gate did not open");
        }
        return x;
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2);
        cluster.agent(0).rpcSync("worker1", Ops::add, 0, 0); // connect first
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @Test
    void aMarkedFunctionCalledAloneRunsOnTheTransportThreadAsTheCallee() {
        RpcAgent caller = cluster.agent(0);
        for (int i = 0; i < 20; i++) {
            assertThat(caller.<Integer, String>rpcAsync("worker1", DirectExecutionTest::where, i).await()).isEqualTo("transport@worker1");
            assertThat(caller.<Integer, String>rpcAsync("worker1", DirectExecutionTest::wherePlain, i).await()).isEqualTo("request@worker1");
        }
    }

    @Test
    void aLargeRequestRunsOnARequestThread() {
        RpcAgent caller = cluster.agent(0);
        byte[] small = new byte[100];
        byte[] large = new byte[DirectExecution.MAX_REQUEST_BYTES + 1];
        assertThat(caller.<byte[], String>rpcAsync("worker1", DirectExecutionTest::whereBig, small).await()).isEqualTo("transport");
        assertThat(caller.<byte[], String>rpcAsync("worker1", DirectExecutionTest::whereBig, large).await()).isEqualTo("request");
    }

    @Test
    void callsThatAreNotAloneRunOnRequestThreads() {
        RpcAgent caller = cluster.agent(0);
        gate = new CountDownLatch(1);
        RpcFuture<Integer> held = caller.rpcAsync("worker1", DirectExecutionTest::gated, 7);
        List<RpcFuture<String>> window = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                window.add(caller.rpcAsync("worker1", DirectExecutionTest::where, i));
            }
            for (RpcFuture<String> call : window) {
                assertThat(call.await(Duration.ofSeconds(30))).isEqualTo("request@worker1");
            }
        } finally {
            gate.countDown();
        }
        assertThat(held.await(Duration.ofSeconds(30))).isEqualTo(7);
    }

    @Test
    void waitingInsideFailsAtOnceNamingTheContract() {
        assertThatThrownBy(() -> cluster.agent(0).<Integer, Integer>rpcAsync("worker1", DirectExecutionTest::waitsForANestedCall, 1).await())
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("would deadlock the transport")
                .hasMessageContaining("@DirectExecution");
        // The transport thread is fine afterwards.
        assertThat(cluster.agent(0).<Integer, String>rpcAsync("worker1", DirectExecutionTest::where, 2).await()).isEqualTo("transport@worker1");
    }

    @Test
    void anAsynchronousMarkedFunctionChainsItsNestedCall() {
        // The caller gets an asynchronous function's result as the future it declared, completed.
        RpcFuture<String> result = cluster.agent(0)
                .<Integer, RpcFuture<String>>rpcAsync("worker1", DirectExecutionTest::chainsANestedCall, 20).await();
        assertThat(result.await(Duration.ofSeconds(30))).isEqualTo("42@transport");
    }
}
