package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Which messages their senders write to the socket themselves (debug info
 * {@code transport.direct_writes}): a call with no other in flight and its answer do; a window of
 * async calls goes through the event loop, in batches.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DirectWritesTest {
    /** Holds the window's calls on the callee until all were sent, so that their answers wait. */
    private static volatile CountDownLatch gate = new CountDownLatch(0);
    private LocalCluster cluster;

    /** A remote function: {@code x + 1}, once the gate opens (bounded). */
    public static int gatedIncrement(int x) throws InterruptedException {
        if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the gate did not open");
        }
        return x + 1;
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private long directWrites(int rank) {
        String value = cluster.agent(rank).getDebugInfo().get("transport.direct_writes");
        assumeThat(value).as("direct writes on (native epoll, JDK 22+)").matches("\\d+");
        return Long.parseLong(value);
    }

    @Test
    void callsOneAtATimeAreWrittenByTheCallerAndTheRequestsThread() {
        RpcAgent caller = cluster.agent(0);
        caller.rpcSync("worker1", Ops::add, 0, 0); // connect first
        long callerBefore = directWrites(0);
        long calleeBefore = directWrites(1);
        for (int i = 0; i < 200; i++) {
            // rpcAsync, awaited at once: rpcSync would take a synchronous-exchange lane (SyncLanesTest)
            assertThat(caller.<Integer, Integer, Integer>rpcAsync("worker1", Ops::add, i, 1).await()).isEqualTo(i + 1);
        }
        // Each call and each reply is alone; one in a while may still find a control unit (a
        // shared-memory release) in the loop's buffer and be queued instead.
        assertThat(directWrites(0) - callerBefore).as("calls the caller wrote").isBetween(150L, 200L);
        assertThat(directWrites(1) - calleeBefore).as("replies the request threads wrote").isBetween(150L, 200L);
    }

    @Test
    void aWindowOfAsyncCallsGoesThroughTheEventLoop() {
        RpcAgent caller = cluster.agent(0);
        caller.rpcSync("worker1", Ops::add, 0, 0);
        long before = directWrites(0);
        long calleeBefore = directWrites(1);
        List<RpcFuture<Integer>> window = new ArrayList<>();
        gate = new CountDownLatch(1);
        try {
            for (int i = 0; i < 64; i++) {
                window.add(caller.rpcAsync("worker1", DirectWritesTest::gatedIncrement, i));
            }
        } finally {
            gate.countDown();
        }
        for (int i = 0; i < 64; i++) {
            assertThat(window.get(i).await()).isEqualTo(i + 1);
        }
        // The first call of the window is alone; the other 63 have calls of ours in flight.
        assertThat(directWrites(0) - before).as("calls of the window the caller wrote").isLessThanOrEqualTo(1);
        // Only the answer to that first (LONE) call may be written by its request thread, if the callee
        // had read no other call of the window when it answered (the gate opens once all were sent,
        // not read); the others, many in flight at once, go through the callee's event loop.
        assertThat(directWrites(1) - calleeBefore).as("answers the request threads wrote").isLessThanOrEqualTo(1);
    }
}
