package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Synchronous calls over synchronous-exchange lanes: the caller's thread reads the answer itself
 * and the callee's lane thread runs the request; everything a call over the connection does still
 * holds (nested calls, errors, timeouts, other calls meanwhile, answers the lane cannot carry).
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SyncLanesTest {
    private static volatile CountDownLatch gate = new CountDownLatch(0);
    private static volatile CountDownLatch entered = new CountDownLatch(0);
    private LocalCluster cluster;

    public static String threadName(int x) {
        return Thread.currentThread().getName();
    }

    /** Where a call on an RRef's value runs. */
    public static String threadOf(Counter counter) {
        return Thread.currentThread().getName();
    }

    /** Calls back the caller synchronously, from the callee's lane thread, two levels deep. */
    public static String pingPong(int depth) {
        String here = Thread.currentThread().getName();
        if (depth == 0) {
            return here;
        }
        String other = Rpc.getWorkerInfo().name().equals("worker0") ? "worker1" : "worker0";
        return here + "|" + Rpc.rpcSync(other, SyncLanesTest::pingPong, depth - 1);
    }

    public static int gated(int x) throws InterruptedException {
        entered.countDown();
        if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the gate did not open");
        }
        return x;
    }

    public static byte[] bytes(int size) {
        byte[] data = new byte[size];
        Arrays.fill(data, (byte) 7);
        return data;
    }

    public static int boom(String message) {
        throw new IllegalArgumentException(message);
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2);
        awaitLane(cluster.agent(0), "worker1");
        awaitLane(cluster.agent(1), "worker0");
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    /** Makes synchronous calls until one went over a lane (the first opens it in the background). */
    private static void awaitLane(RpcAgent agent, String to) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!agent.rpcSync(to, SyncLanesTest::threadName, 0).startsWith("ferry-lane-")) {
            assertThat(System.nanoTime() - deadline).as("a lane to " + to + " opened within 30 s").isNegative();
        }
    }

    /**
     * Closes the gate and starts {@code gated(x)} from {@code caller} to {@code to} on another
     * thread; returns once the handler runs (it then holds its lane until the gate opens).
     */
    private static CompletableFuture<Integer> startGatedCall(RpcAgent caller, String to, int x)
            throws InterruptedException {
        gate = new CountDownLatch(1);
        entered = new CountDownLatch(1);
        CompletableFuture<Integer> call = CompletableFuture.supplyAsync(
                () -> caller.rpcSync(to, SyncLanesTest::gated, x));
        assertThat(entered.await(30, TimeUnit.SECONDS)).as("the gated handler started").isTrue();
        return call;
    }

    private static long exchanges(RpcAgent agent) {
        return Long.parseLong(agent.getDebugInfo().get("transport.lanes.exchanges"));
    }

    @Test
    void aSynchronousCallRunsOnTheCalleesLaneThreadAndIsCounted() {
        RpcAgent w0 = cluster.agent(0);
        long before = exchanges(w0);
        for (int i = 0; i < 20; i++) {
            assertThat(w0.rpcSync("worker1", SyncLanesTest::threadName, i)).startsWith("ferry-lane-");
        }
        assertThat(exchanges(w0)).isGreaterThanOrEqualTo(before + 20);
        assertThat(w0.getDebugInfo()).containsKey("transport.lanes.open");
        // asynchronous calls keep the connection and its request threads
        assertThat(w0.<Integer, String>rpcAsync("worker1", SyncLanesTest::threadName, 1).await())
                .doesNotStartWith("ferry-lane-");
    }

    @Test
    void callsOnAnRRefsValueTakeALaneEvenRightAfterItsCreation() {
        RpcAgent w0 = cluster.agent(0);
        awaitLane(w0, "worker1");
        long before = exchanges(w0);
        for (int i = 0; i < 50; i++) {
            // the creation goes over the connection; the call on the value, over a lane, may
            // reach the owner first and then waits for the value
            RRef<Counter> counter = w0.to("worker1").remote(Counter::new, i);
            assertThat(counter.rpcSync(Counter::add, 1)).isEqualTo(i + 1);
            assertThat(counter.rpcSync(SyncLanesTest::threadOf)).startsWith("ferry-lane-");
            assertThat(counter.toHere().value()).isEqualTo(i + 1);
        }
        assertThat(exchanges(w0)).isGreaterThanOrEqualTo(before + 100);
    }

    /**
     * An RRef closed just before does not change the route of the next call to its owner: its
     * delete never rides on a plain call (that would make the call ordered and keep it off the
     * lane), it goes on its own.
     */
    @Test
    void aClosedRRefDoesNotPushTheNextCallOffTheLane() {
        RpcAgent w0 = cluster.agent(0);
        awaitLane(w0, "worker1");
        for (int i = 0; i < 20; i++) {
            RRef<Integer> value = w0.remote("worker1", Ops::noop, i);
            assertThat(value.toHere()).isEqualTo(i);
            value.close();
            assertThat(w0.rpcSync("worker1", SyncLanesTest::threadName, i)).startsWith("ferry-lane-");
        }
    }

    @Test
    void aHandlerOnALaneMayWaitForNestedCallsToItsCaller() {
        String path = cluster.agent(0).rpcSync("worker1", SyncLanesTest::pingPong, 3);
        String[] threads = path.split("\\|");
        // worker0 → worker1 and back over lanes; deeper, the first lanes are held by the calls
        // still waiting, so those take further lanes when open, else the connections
        assertThat(threads).hasSize(4);
        assertThat(threads[0]).startsWith("ferry-lane-");
        assertThat(threads[1]).startsWith("ferry-lane-");
    }

    @Test
    void otherCallsCompleteWhileALaneHandlerBlocks() throws Exception {
        RpcAgent w0 = cluster.agent(0);
        try {
            CompletableFuture<Integer> blocked = startGatedCall(w0, "worker1", 5);
            // the lane is held by the blocked call: these go over the connection
            for (int i = 0; i < 5; i++) {
                assertThat(w0.rpcSync("worker1", Ops::add, i, 1)).isEqualTo(i + 1);
            }
            gate.countDown();
            assertThat(blocked.get(30, TimeUnit.SECONDS)).isEqualTo(5);
        } finally {
            gate.countDown();
        }
    }

    @Test
    void aCallerThatFindsTheLaneBusyGetsALaneOfItsOwnSoon() throws Exception {
        RpcAgent w0 = cluster.agent(0);
        try {
            CompletableFuture<Integer> blocked = startGatedCall(w0, "worker1", 5);
            awaitLane(w0, "worker1"); // a second lane opens for this thread
            gate.countDown();
            assertThat(blocked.get(30, TimeUnit.SECONDS)).isEqualTo(5);
        } finally {
            gate.countDown();
        }
        assertThat(Integer.parseInt(w0.getDebugInfo().get("transport.lanes.open"))).isGreaterThanOrEqualTo(2);
    }

    @Test
    void aCalleeThatGoesAwayFailsTheCallWaitingOnItsLane() throws Exception {
        LocalCluster pair = LocalCluster.start(2);
        try {
            RpcAgent w0 = pair.agent(0);
            awaitLane(w0, "worker1");
            CompletableFuture<Integer> waiting = startGatedCall(w0, "worker1", 1);
            pair.agent(1).shutdown(false, Duration.ZERO); // at once: its lanes close under the call
            assertThatThrownBy(() -> waiting.get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RpcException.class)
                    .cause().satisfies(e -> assertThat(((RpcException) e).code())
                            .isIn(RpcException.Code.UNAVAILABLE, RpcException.Code.SHUTDOWN));
        } finally {
            gate.countDown();
            pair.agent(0).shutdown(false, Duration.ZERO); // its peer is gone: no graceful shutdown
            pair.close();
        }
    }

    @Test
    void withNoLanesCallsTakeTheConnection() {
        try (LocalCluster plain = LocalCluster.start(2, b -> b.transport(TransportTuning.defaults().withSyncLanes(0)))) {
            RpcAgent w0 = plain.agent(0);
            for (int i = 0; i < 20; i++) {
                assertThat(w0.rpcSync("worker1", SyncLanesTest::threadName, i)).doesNotStartWith("ferry-lane-");
            }
            assertThat(w0.getDebugInfo()).containsEntry("transport.lanes", "off (syncLanes 0)");
        }
        assertThatThrownBy(() -> TransportTuning.defaults().withSyncLanes(-1))
                .isInstanceOf(RpcException.class).hasMessageContaining("syncLanes");
        assertThatThrownBy(() -> TransportTuning.defaults().withSyncLanes(TransportTuning.MAX_SYNC_LANES + 1))
                .isInstanceOf(RpcException.class).hasMessageContaining("syncLanes");
    }

    @Test
    void aRemoteErrorComesBackWithItsCause() {
        RpcAgent w0 = cluster.agent(0);
        long before = exchanges(w0);
        assertThatThrownBy(() -> w0.rpcSync("worker1", SyncLanesTest::boom, "lane error"))
                .isInstanceOf(RpcException.class)
                .hasMessageContaining("lane error")
                .hasMessageContaining("IllegalArgumentException");
        assertThat(exchanges(w0)).isGreaterThan(before);
    }

    @Test
    void answersTheLaneCannotCarryComeOverTheConnection() {
        RpcAgent w0 = cluster.agent(0);
        long before = exchanges(w0);
        byte[] large = w0.rpcSync("worker1", SyncLanesTest::bytes, 3 << 20);
        assertThat(large).hasSize(3 << 20).containsOnly((byte) 7);
        byte[] small = w0.rpcSync("worker1", SyncLanesTest::bytes, 100);
        assertThat(small).hasSize(100);
        assertThat(exchanges(w0)).isGreaterThanOrEqualTo(before + 2);
        // and the lane still works after a diverted answer
        assertThat(w0.rpcSync("worker1", SyncLanesTest::threadName, 0)).startsWith("ferry-lane-");
    }

    @Test
    void withATokenLanesAuthenticateAndAStrangerIsDropped() throws Exception {
        try (LocalCluster secured = LocalCluster.start(2, b -> b.authToken("a-secret-of-the-group-0123456789"))) {
            RpcAgent w0 = secured.agent(0);
            awaitLane(w0, "worker1");
            Map<String, String> callee = secured.agent(1).getDebugInfo();
            assertThat(callee).containsEntry("transport.auth.rejected", "0");
            int port = Integer.parseInt(callee.get("transport.lanes.tcp_port"));
            try (Socket stranger = new Socket("127.0.0.1", port)) {
                stranger.setSoTimeout(10_000);
                stranger.getOutputStream().write(new byte[64]); // not an authentication hello
                InputStream in = stranger.getInputStream();
                try {
                    while (in.read() >= 0) {
                        // the worker's own hello, then the end: it dropped the stranger
                    }
                } catch (java.net.SocketException reset) {
                    // dropped with our bytes unread: the end as well
                }
            }
            assertThat(secured.agent(1).getDebugInfo()).containsEntry("transport.auth.rejected", "1");
            assertThat(w0.rpcSync("worker1", SyncLanesTest::threadName, 0)).startsWith("ferry-lane-");
        }
    }

    @Test
    void aTimedOutCallClosesItsLaneAndLaterCallsStillWork() throws Exception {
        RpcAgent w1 = cluster.agent(1);
        gate = new CountDownLatch(1);
        entered = new CountDownLatch(1);
        try {
            assertThatThrownBy(() -> w1.to("worker0").withTimeout(Duration.ofMillis(300))
                    .rpcSync(SyncLanesTest::gated, 1))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
        } finally {
            gate.countDown();
        }
        assertThat(w1.rpcSync("worker0", Ops::add, 2, 3)).isEqualTo(5);
        awaitLane(w1, "worker0"); // reopened
    }
}
