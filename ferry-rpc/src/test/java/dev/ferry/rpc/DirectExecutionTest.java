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
import java.util.concurrent.atomic.AtomicBoolean;

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

    /** Set while {@link #holdsTheTransportThread} runs, and whether it runs on a transport thread. */
    private static final CountDownLatch holding = new CountDownLatch(1);
    private static volatile boolean heldOnTransport;
    private static final AtomicBoolean release = new AtomicBoolean();

    /**
     * Keeps its transport thread busy (spinning, not waiting: waiting is refused there) until
     * released, so that nothing else read by that thread is handled meanwhile (bounded).
     */
    @DirectExecution
    public static boolean holdsTheTransportThread(int x) {
        heldOnTransport = NonBlockingThreads.currentIsNonBlocking();
        holding.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!release.get() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        return release.get();
    }

    /** Where it ran, and whether the RRef it got was confirmed by its owner by then. */
    @DirectExecution
    public static String whereWithRRef(RRef<Integer> rref) {
        return (NonBlockingThreads.currentIsNonBlocking() ? "transport" : "request") + ", confirmed " + rref.confirmedByOwner();
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

    /**
     * An RRef argument that its owner has yet to confirm sends the call to a request thread, which
     * runs it once the owner confirmed. worker1's confirmation from the owner, worker2, is held back
     * by keeping worker2's transport thread for worker1's connection busy: worker1's fork request
     * reads on that connection after the call that holds it.
     */
    @Test
    void anRRefArgumentAwaitingItsOwnersConfirmationSendsTheCallToARequestThread() throws InterruptedException {
        try (LocalCluster three = LocalCluster.start(3)) {
            RRef<Integer> rref = three.agent(0).remote("worker2", Ops::add, 20, 22);
            assertThat(rref.toHere()).isEqualTo(42);
            RpcFuture<Boolean> held = three.agent(1).rpcAsync("worker2", DirectExecutionTest::holdsTheTransportThread, 1);
            try {
                assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
                assertThat(heldOnTransport).as("the holding call runs on worker2's transport thread").isTrue();
                RpcFuture<String> call = three.agent(0).rpcAsync("worker1", DirectExecutionTest::whereWithRRef, rref);
                // Still waiting for worker2 (a request thread waits for the confirmation): a bounded
                // look, then release worker2, and the call completes on the request thread.
                assertThatThrownBy(() -> call.await(Duration.ofMillis(200)))
                        .isInstanceOf(RpcException.class)
                        .satisfies(e -> assertThat(((RpcException) e).code()).isEqualTo(RpcException.Code.TIMEOUT));
                release.set(true);
                assertThat(call.await(Duration.ofSeconds(30))).isEqualTo("request, confirmed true");
            } finally {
                release.set(true);
            }
            assertThat(held.await(Duration.ofSeconds(30))).isTrue();
        }
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
