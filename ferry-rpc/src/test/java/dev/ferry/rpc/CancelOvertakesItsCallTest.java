package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.testing.DynamicWorld;
import dev.ferry.rpc.testing.LocalCluster;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cancel that reaches the callee before the call it cancels: the call is not run when it arrives
 * (its caller's future has failed {@code CANCELLED} already), and nothing is left of either. Real
 * workers over TCP on loopback (no shared memory: a large call goes in chunks); each scenario makes
 * the overtaking certain rather than likely, and checks on the callee that it happened
 * ({@code agent.server_early_cancelled_calls}).
 */
@Timeout(60)
class CancelOvertakesItsCallTest {
    private static final Duration OWN_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration BOUND = Duration.ofSeconds(10);
    /** How long worker0 holds its calls in the large-call scenario: far longer than its cancel takes. */
    private static final Duration CALL_DELAY = Duration.ofSeconds(2);
    private static final UnaryOperator<RpcBackendOptions.Builder> OVER_TCP =
            b -> b.numWorkerThreads(4).transport(TransportTuning.defaults().withUnixSockets(false));

    private CancelFunctions.Probe probe;

    @BeforeEach
    void newProbe() {
        probe = new CancelFunctions.Probe();
        CancelFunctions.probe = probe;
    }

    /**
     * worker0's calls wait 2 s in its fault injection before they go (then in 1 MiB chunks); the
     * cancel, sent after, is not held behind them. The call carries an RRef worker2 owns, which
     * worker1 must still accept.
     */
    @Test
    void aLargeCallCancelledRightAfterItWasSentNeverRuns() {
        FaultInjection delayCalls = FaultInjection.builder().delay(CALL_DELAY, MessageType.CALL).build();
        try (LocalCluster cluster = LocalCluster.start(3, b -> OVER_TCP.apply(b).faultInjection(delayCalls))) {
            RRef<Integer> travelling = cluster.agent(0).remote("worker2", Ops::noop, 3);
            assertThat(travelling.toHere()).isEqualTo(3);
            long earlyBefore = debug(cluster, 1, "agent.server_early_cancelled_calls");
            byte[] large = new byte[16 << 20];

            RpcFuture<Integer> call = cluster.agent(0).to("worker1").withTimeout(OWN_TIMEOUT)
                    .rpcAsync(CancelFunctions::countLarge, travelling, large);
            assertThat(call.cancel(true)).isTrue();
            assertThat(call.done()).as("the caller's future ends at once").isTrue();
            assertThatThrownBy(call::await).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.code()).isEqualTo(RpcException.Code.CANCELLED));
            await().atMost(BOUND).untilAsserted(() -> assertThat(debug(cluster, 1, "agent.server_early_cancels"))
                    .as("worker1 remembers the cancel").isEqualTo(1));

            await().atMost(BOUND.plus(CALL_DELAY)).untilAsserted(() ->
                    assertThat(debug(cluster, 1, "agent.server_early_cancelled_calls"))
                            .as("the call arrived after its cancel").isEqualTo(earlyBefore + 1));
            assertTablesDrain(cluster);
            assertThat(probe.ran.get()).as("the cancelled call ran").isZero();
            await().atMost(BOUND).untilAsserted(() -> {
                assertThat(cluster.agent(0).getDebugInfo()).as("the fork worker0 sent was accepted")
                        .containsEntry("rref.num_pending_children", "0");
                assertThat(cluster.agent(1).getDebugInfo()).containsEntry("rref.num_pending_users", "0");
            });
            assertThat(cluster.agent(0).to("worker1").withTimeout(OWN_TIMEOUT).rpcSync(Ops::add, 1, 2))
                    .as("the connection goes on").isEqualTo(3);
            travelling.close();
        }
    }

    /**
     * worker0 calls worker1, whose handler calls worker2 with {@code rpcSync} over a lane; worker2
     * holds that call on its lane's thread, before it takes it in, until worker1's cancel (worker0
     * cancelled its call) has come over the connection. A nested {@code rpcSync} takes a lane when
     * one is idle at that moment: a few tries make sure one scenario ran on a lane.
     */
    @Test
    void aCallOnALaneWhoseCancelCameOverTheConnectionFirstNeverRuns() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, OVER_TCP)) {
            long until = System.nanoTime() + BOUND.toNanos();
            while (!cluster.agent(1).rpcSync("worker2", CancelFunctions::threadName).startsWith("ferry-lane-")) {
                assertThat(System.nanoTime() - until).as("a lane from worker1 to worker2 opened").isNegative();
            }
            HoldOnALane hold = new HoldOnALane(cluster.agent(2));
            try (AutoCloseable registration = cluster.agent(2).addCallObserver(hold)) {
                boolean onALane = false;
                for (int attempt = 0; attempt < 5 && !onALane; attempt++) {
                    newProbe();
                    onALane = cancelWhileHeldOnALane(cluster, hold);
                }
                assertThat(onALane).as("a nested call took a lane in one of the tries").isTrue();
            }
            assertThat(cluster.agent(1).rpcSync("worker2", Ops::noop, 7)).as("the lanes go on").isEqualTo(7);
        }
    }

    /**
     * worker1's cancel overtakes its call (held by its fault injection), then worker1 crashes before
     * the call goes: worker0 keeps a tombstone for a call that never comes. worker1 comes back as a
     * new incarnation, whose call ids start over: worker0 drops the old one's tombstones before
     * anything of the new one runs, and the new one's calls, their ids past the old call's, all run.
     */
    @Test
    void aCrashedCallersTombstoneCancelsNothingOfItsNextIncarnation() throws Exception {
        try (DynamicWorld world = DynamicWorld.start()) {
            FaultInjection holdCalls = FaultInjection.builder().delay(Duration.ofMinutes(1), MessageType.CALL).build();
            CompletableFuture<RpcAgent> starting = CompletableFuture.supplyAsync(() -> world.join(0, 2));
            RpcAgent one = world.join(1, 2, b -> b.faultInjection(holdCalls));
            RpcAgent zero = starting.get(BOUND.toSeconds(), TimeUnit.SECONDS);
            List<Long> oldIds = callIds(one);

            RpcFuture<Integer> call = one.to("worker0").withTimeout(OWN_TIMEOUT).rpcAsync(CancelFunctions::countRun);
            assertThat(call.cancel(true)).isTrue();
            await().atMost(BOUND).until(() -> "1".equals(zero.getDebugInfo().get("agent.server_early_cancels")));
            one.shutdown(false, Duration.ZERO); // crashes: its held call is never sent
            assertThat(zero.getDebugInfo()).containsEntry("agent.server_early_cancels", "1")
                    .containsEntry("agent.server_early_cancelled_calls", "0");

            RpcAgent again = world.join(1, 2);
            List<Long> newIds = callIds(again);
            await().atMost(BOUND).untilAsserted(() -> assertThat(zero.getDebugInfo())
                    .as("the old incarnation's tombstone went with it").containsEntry("agent.server_early_cancels", "0"));
            int calls = 0;
            while (newIds.isEmpty() || newIds.getLast() <= oldIds.getFirst()) {
                assertThat(again.rpcSync("worker0", CancelFunctions::countRun)).isEqualTo(++calls);
            }
            assertThat(probe.ran.get()).as("every call of the new incarnation ran").isEqualTo(calls);
            assertThat(zero.getDebugInfo()).containsEntry("agent.server_early_cancelled_calls", "0");
        }
    }

    /** The ids of the application's calls {@code caller} makes from now on, in order. */
    private static List<Long> callIds(RpcAgent caller) {
        List<Long> ids = new CopyOnWriteArrayList<>();
        caller.addCallObserver(new CallObserver() {
            @Override
            public boolean followsCall(CallInfo info, CallHeaders headers) {
                ids.add(info.callId());
                return false;
            }
        });
        return ids;
    }

    /** One try: false if the nested call did not take a lane (it then ran, and the try proves nothing). */
    private boolean cancelWhileHeldOnALane(LocalCluster cluster, HoldOnALane hold) {
        long earlyBefore = debug(cluster, 2, "agent.server_early_cancelled_calls");
        CountDownLatch held = hold.arm();
        RpcFuture<Integer> call = cluster.agent(0).to("worker1").withTimeout(OWN_TIMEOUT)
                .rpcAsync(CancelFunctions::relaySyncToCount, "worker2");
        await().atMost(BOUND).until(() -> held.getCount() == 0 || call.done());
        if (held.getCount() != 0) {
            hold.disarm();
            assertThat(call.await()).as("not on a lane: it ran").isEqualTo(1);
            assertTablesDrain(cluster);
            return false;
        }
        assertThat(call.cancel(true)).isTrue();
        assertThatThrownBy(call::await).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.CANCELLED));
        try {
            assertThat(probe.nestedEnded.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        assertThat(((RpcException) probe.nestedFailure.get()).code()).as("worker1's nested rpcSync")
                .isEqualTo(RpcException.Code.CANCELLED);
        await().atMost(BOUND).untilAsserted(() -> assertThat(debug(cluster, 2, "agent.server_early_cancelled_calls"))
                .as("the call was taken in after its cancel").isEqualTo(earlyBefore + 1));
        assertTablesDrain(cluster);
        assertThat(probe.ran.get()).as("the cancelled call ran").isZero();
        return true;
    }

    /**
     * Holds the next call that arrives on one of its worker's lanes, on the lane's thread, until a
     * cancel that came before its call is remembered there. (An observer must not block: this one
     * does so on purpose, on a lane's own thread only, to make the race certain.)
     */
    private static final class HoldOnALane implements CallObserver {
        private final RpcAgent worker;
        private final AtomicBoolean armed = new AtomicBoolean();
        private volatile CountDownLatch held = new CountDownLatch(1);

        HoldOnALane(RpcAgent worker) {
            this.worker = worker;
        }

        CountDownLatch arm() {
            held = new CountDownLatch(1);
            armed.set(true);
            return held;
        }

        void disarm() {
            armed.set(false);
        }

        @Override
        public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
            if (Thread.currentThread().getName().startsWith("ferry-lane-") && armed.compareAndSet(true, false)) {
                held.countDown();
                await().atMost(BOUND).until(() -> !"0".equals(worker.getDebugInfo().get("agent.server_early_cancels")));
            }
            return false;
        }
    }

    private static long debug(LocalCluster cluster, int rank, String key) {
        return Long.parseLong(cluster.agent(rank).getDebugInfo().get(key));
    }

    /** Every worker's tables of calls sent and received, and of early cancels, drain. */
    private static void assertTablesDrain(LocalCluster cluster) {
        await().atMost(BOUND).untilAsserted(() -> {
            for (RpcAgent agent : cluster.agents()) {
                assertThat(agent.getDebugInfo()).as(agent.getWorkerInfo().name())
                        .containsEntry("agent.client_active_user_calls", "0")
                        .containsEntry("agent.server_active_calls", "0")
                        .containsEntry("agent.server_cancellable_calls", "0")
                        .containsEntry("agent.server_early_cancels", "0");
            }
        });
    }
}
