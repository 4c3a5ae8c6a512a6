package dev.ferry.rpc.contract;

import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.Counter;
import dev.ferry.rpc.CounterApi;
import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteStackTrace;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.testing.Eventually;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What an agent promises, whatever carries its messages: calls and their values, nested and
 * asynchronous calls, failures, timeouts, RRefs and their lifecycle, shutdown. Each subclass runs
 * the whole contract over one route configuration (in-process, TCP, Unix sockets with and without
 * shared memory, lanes off, direct writes off, authenticated, TLS) and checks that configuration is
 * really the one in use ({@link #checkRoute}). grpc-java's {@code AbstractTransportTest} does the
 * same for its transports; this is its counterpart one level up, for the agent.
 *
 * <p>Every call is made both ways a caller can wait, {@code rpcSync} and
 * {@code rpcAsync(...).await()} ({@link #both}), since the transport may route them differently
 * (an {@code rpcSync} takes an idle lane where it can): the two must be indistinguishable in their
 * results, errors (codes and messages), timeouts, interrupts and the thread a handler runs on.
 * Kept quick: the whole matrix should cost well under a minute.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractAgentContractTest {
    private LocalCluster cluster;

    /** The backend under test. */
    protected BackendType backend() {
        return BackendType.NETTY;
    }

    /** The options of the route configuration under test, on top of the contract's own. */
    protected abstract RpcBackendOptions.Builder configure(RpcBackendOptions.Builder options);

    /** Asserts that {@code agent}'s messages to worker1 take the configuration's route (after one call). */
    protected abstract void checkRoute(Map<String, String> debugInfo);

    /** Messages up to this size: a few MiB travel in every test, one over it fails. */
    private static final int MAX_MESSAGE_BYTES = 8 << 20;
    /** Handlers of {@link #held} wait on this. */
    private static volatile java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(0);

    /** Counted down by {@link #held} as it starts waiting. */
    private static volatile java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(0);

    /** Waits until the test opens the gate: a call that answers exactly when the test wants. */
    public static int held(int x) throws InterruptedException {
        entered.countDown();
        if (!gate.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("the gate never opened");
        }
        return x;
    }

    @BeforeAll
    void start() {
        cluster = startCluster(3);
    }

    /** A graceful shutdown of the whole group waits for the work still outstanding. */
    @AfterAll
    void stop() {
        List<RpcFuture<Long>> outstanding = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            outstanding.add(w(0).rpcAsync("worker1", Ops::sleepMillis, 200L));
        }
        cluster.close(); // every worker shuts down gracefully at once
        assertThat(RpcFuture.waitAll(outstanding)).containsOnly(200L);
        assertThatThrownBy(() -> w(0).rpcSync("worker1", Ops::noop, 1)).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.SHUTDOWN));
    }

    /** A cluster of this configuration (the contract's rpc timeout, two request threads). */
    protected LocalCluster startCluster(int size) {
        return LocalCluster.start(size, backend(), b -> configure(b.rpcTimeout(Duration.ofSeconds(20))
                .numWorkerThreads(2).maxMessageBytes(MAX_MESSAGE_BYTES)));
    }

    private RpcAgent w(int rank) {
        return cluster.agent(rank);
    }

    /** Calls {@code function(argument)} on worker1 from worker0 with {@code rpcSync} and with {@code rpcAsync().await()}. */
    private <A, R> R both(RpcFunction1<A, R> function, A argument) {
        R synchronous = w(0).rpcSync("worker1", function, argument);
        R awaited = w(0).<A, R>rpcAsync("worker1", function, argument).await();
        assertThat(java.util.Objects.deepEquals(awaited, synchronous)).as("rpcAsync(...).await() as rpcSync").isTrue();
        return synchronous;
    }

    /** The failure of {@code function(argument)} on worker1, the same both ways. */
    private <A, R> RpcException bothFail(RpcFunction1<A, R> function, A argument) {
        RpcException synchronous = failure(() -> w(0).rpcSync("worker1", function, argument));
        RpcException awaited = failure(() -> w(0).<A, R>rpcAsync("worker1", function, argument).await());
        assertThat(awaited.code()).isEqualTo(synchronous.code());
        assertThat(awaited).hasMessage(synchronous.getMessage());
        return synchronous;
    }

    private static RpcException failure(Runnable call) {
        try {
            call.run();
        } catch (RpcException e) {
            return e;
        }
        throw new AssertionError("the call did not fail");
    }

    // ---------------------------------------------------------------- the route

    @Test
    void theConfigurationsRouteIsInUse() {
        assertThat(both(Ops::noop, 1)).isEqualTo(1);
        checkRoute(w(0).getDebugInfo());
    }

    // ---------------------------------------------------------------- calls

    @Test
    void callsByNameRankAndWorkerInfo() {
        assertThat(w(0).rpcSync("worker1", Ops::add, 3, 4)).isEqualTo(7);
        assertThat(w(0).to(2).rpcAsync(Ops::add, 1, 1).await()).isEqualTo(2);
        assertThat(w(0).to(w(0).getWorkerInfo("worker1")).rpcSync(Ops::concat, "a", "b")).isEqualTo("ab");
        assertThat(w(0).rpcSync("worker0", Ops::whoAmI)).as("a worker calls itself").isEqualTo("worker0");
    }

    record Point(int x, int y) {
    }

    @Test
    void valuesOfManyKindsRoundTrip() {
        for (Object value : java.util.Arrays.asList(null, 2L, 3.5, "text", new Point(1, 2), List.of(1, 2),
                Map.of("a", 1), new ArrayList<>(List.of(new Point(3, 4))))) {
            assertThat(both(Ops::identity, value)).isEqualTo(value);
        }
        int[] ints = (int[]) both(Ops::identity, new int[] {1, 2, 3});
        assertThat(ints).containsExactly(1, 2, 3);
    }

    @Test
    void largeValuesTravelOutOfBandAndBuffersKeepTheirOrder() {
        float[] big = new float[1 << 20];
        for (int i = 0; i < big.length; i += 97) {
            big[i] = i * 0.5f;
        }
        assertThat((float[]) both(Ops::identity, big)).isEqualTo(big);
        for (int size : new int[] {100, 40 << 10, 3 << 20}) {
            ByteBuffer sent = ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < size; i += 7) {
                sent.put(i, (byte) i);
            }
            ByteBuffer back = (ByteBuffer) both(Ops::identity, sent);
            assertThat(back).isNotSameAs(sent).isEqualTo(sent);
            assertThat(back.order()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
        }
    }

    @Test
    void capturedValuesTravelWithALambda() {
        int offset = 100;
        RpcFunction1<Integer, Integer> addOffset = x -> x + offset;
        assertThat(both(addOffset, 5)).isEqualTo(105);
    }

    // ---------------------------------------------------------------- failures and timeouts

    @Test
    void aRemoteErrorCarriesItsClassMessageStackAndWorker() {
        RpcException e = bothFail(Ops::fail, "Expected error");
        assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
        assertThat(e.remoteClassName()).isEqualTo(IllegalArgumentException.class.getName());
        assertThat(e.workerName()).isEqualTo("worker1");
        assertThat(e.getCause().getCause()).isInstanceOf(RemoteStackTrace.class);
    }

    @Test
    void aRemoteCauseChainIsKept() {
        RpcException e = bothFail(Ops::failNested, "x");
        RemoteStackTrace remote = (RemoteStackTrace) e.getCause().getCause();
        assertThat(remote.remoteClassName()).isEqualTo(RuntimeException.class.getName());
        assertThat(remote.getCause()).isInstanceOf(RemoteStackTrace.class).hasMessage("inner: x");
    }

    @Test
    void collectionsAsArguments() {
        assertThat(both(Ops::sum, List.of(1, 2, 3, 4))).isEqualTo(10);
        assertThat(both(Ops::lengths, List.of("ab", "c"))).isEqualTo(Map.of("ab", 2, "c", 1));
    }

    @Test
    void refusedFunctionsAndOversizedMessagesFailOnlyThatCall() {
        RpcFunction1<String, String> property = System::getProperty;
        assertThat(bothFail(property, "user.home").code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION);
        RpcException tooLarge = bothFail(Ops::identity, (Object) new byte[MAX_MESSAGE_BYTES + 1]);
        assertThat(tooLarge.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR);
        assertThat(tooLarge).hasMessageContaining("exceeds the maximum message size")
                .hasMessageContaining("raise RpcBackendOptions.Builder.maxMessageBytes on every worker");
        RpcException answerTooLarge = bothFail(AbstractAgentContractTest::bytes, MAX_MESSAGE_BYTES + 1);
        assertThat(answerTooLarge.code()).as("an answer over the limit").isEqualTo(RpcException.Code.PROTOCOL_ERROR);
        assertThat(answerTooLarge).hasMessageContaining("exceeds the maximum message size of " + MAX_MESSAGE_BYTES + " bytes");
        assertThat(both(Ops::noop, 5)).isEqualTo(5);
    }

    public static byte[] bytes(int size) {
        return new byte[size];
    }

    /** A caller that waits one way or the other: what {@code rpcSync} must be indistinguishable from. */
    private enum Waiting {
        RPC_SYNC, RPC_ASYNC_AWAIT;

        <A, R> R call(RpcAgent agent, Duration timeout, RpcFunction1<A, R> function, A argument) {
            var target = agent.to("worker1").withTimeout(timeout);
            return this == RPC_SYNC ? target.rpcSync(function, argument) : target.rpcAsync(function, argument).await();
        }
    }

    @Test
    void aTimeoutNamesTheCalleeAndTheDurationTheSameBothWaysAndTheWorkerGoesOn() {
        List<RpcException> failures = new ArrayList<>();
        for (Waiting waiting : Waiting.values()) {
            gate = new java.util.concurrent.CountDownLatch(1);
            try {
                failures.add(failure(() -> waiting.call(w(0), Duration.ofMillis(300), AbstractAgentContractTest::held, 1)));
            } finally {
                gate.countDown();
            }
        }
        for (RpcException e : failures) {
            assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT);
            assertThat(e).hasMessage("RPC ran for more than set timeout (300 ms) and will now be marked with an error:"
                    + " AbstractAgentContractTest::held on worker1");
        }
        assertThat(both(Ops::noop, 2)).isEqualTo(2);
    }

    /**
     * An interrupted caller gives up at once with the interrupt flag kept, while its call goes on
     * and completes (it is neither failed nor cancelled): the same for {@code rpcSync}, whichever
     * route it took, as for {@code rpcAsync(...).await()}.
     */
    @Test
    void anInterruptedCallerGivesUpWhileItsCallGoesOnAndCompletes() throws Exception {
        for (Waiting waiting : Waiting.values()) {
            long succeeded = counter(w(0), "agent.calls_succeeded");
            long failed = counter(w(0), "agent.calls_failed");
            gate = new java.util.concurrent.CountDownLatch(1);
            entered = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CompletableFuture<Throwable> outcome = new java.util.concurrent.CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    waiting.call(w(0), Duration.ofSeconds(20), AbstractAgentContractTest::held, 7);
                    outcome.complete(new AssertionError("the call returned"));
                } catch (Throwable e) {
                    outcome.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError("flag cleared", e));
                }
            });
            try {
                caller.start();
                assertThat(entered.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("the handler started").isTrue();
                caller.interrupt();
                assertThat(outcome.get(30, java.util.concurrent.TimeUnit.SECONDS)).as(waiting.name())
                        .isInstanceOfSatisfying(RpcException.class, e -> {
                            assertThat(e.code()).isEqualTo(RpcException.Code.INTERNAL);
                            assertThat(e.getCause()).isInstanceOf(InterruptedException.class);
                        });
                assertThat(counter(w(0), "agent.calls_failed")).as("the call is not failed").isEqualTo(failed);
            } finally {
                gate.countDown();
            }
            Eventually.until("the call completes", () -> counter(w(0), "agent.calls_succeeded") == succeeded + 1);
            assertThat(counter(w(0), "agent.calls_failed")).isEqualTo(failed);
        }
        assertThat(both(Ops::noop, 3)).isEqualTo(3);
    }

    /** Where a handler runs: its agent's request thread, which may block (never a transport thread). */
    public static String handlerThread(int x) {
        return dev.ferry.rpc.Rpc.current().getWorkerInfo().name() + ", may block "
                + !dev.ferry.rpc.internal.concurrent.NonBlockingThreads.currentIsNonBlocking();
    }

    /** Blocks on a call back to its caller. */
    public static int callsBack(int x) {
        return dev.ferry.rpc.Rpc.rpcSync("worker0", Ops::noop, x);
    }

    @Test
    void aHandlerRunsOnARequestThreadThatMayBlockBothWays() {
        for (int i = 0; i < 10; i++) {
            assertThat(both(AbstractAgentContractTest::handlerThread, i)).isEqualTo("worker1, may block true");
        }
        assertThat(both(AbstractAgentContractTest::callsBack, 5)).as("a handler blocked on a nested call").isEqualTo(5);
    }

    private static long counter(RpcAgent agent, String key) {
        return Long.parseLong(agent.getDebugInfo().get(key));
    }

    // ---------------------------------------------------------------- nested and asynchronous

    @Test
    void nestedCallsDoNotDeadlockTwoRequestThreads() {
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            futures.add(w(i % 3).to(1).rpcAsync(Ops::deepRelay, 6, i));
        }
        for (int i = 0; i < 16; i++) {
            assertThat(futures.get(i).await()).isEqualTo(i);
        }
        assertThat(w(0).rpcSync("worker1", Ops::relay, "worker1", 5)).as("a worker calls itself, nested").isEqualTo(5);
    }

    @Test
    void asynchronousFunctionsReplyWhenTheirFutureCompletes() {
        RpcFuture<Integer> relayed = w(0).rpcSync("worker1", Ops::asyncRelay, "worker2", 11);
        assertThat(relayed.await()).isEqualTo(11);
        assertThat(w(0).rpcAsync("worker1", Ops::asyncChained, "worker2", 1).await().await()).isEqualTo(4);
        assertThatThrownBy(() -> w(0).rpcSync("worker1", Ops::asyncFailLater, "worker2"))
                .isInstanceOf(RpcException.class).hasMessageContaining("failed later");
    }

    @Test
    void waitingOnATransportThreadFailsAtOnce() {
        gate = new java.util.concurrent.CountDownLatch(1);
        RpcFuture<Integer> first = w(0).rpcAsync("worker1", AbstractAgentContractTest::held, 1);
        RpcFuture<Long> slow = w(0).rpcAsync("worker2", Ops::sleepMillis, 1_000L);
        // Attached before the answer comes: the callback runs on the thread that delivers it.
        RpcFuture<Long> child = first.then(f -> slow.await());
        gate.countDown();
        assertThatThrownBy(() -> child.await(Duration.ofSeconds(10))).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.ILLEGAL_STATE));
        assertThat(slow.await(Duration.ofSeconds(10))).isEqualTo(1_000L);
    }

    // ---------------------------------------------------------------- RRefs

    @Test
    void rrefsCreateFetchAndRunMethodsWhereTheValueLives() {
        RRef<Integer> sum = w(0).remote("worker1", Ops::add, 3, 4);
        assertThat(sum.toHere()).isEqualTo(7);
        RRef<Counter> counter = w(0).to(1).remote(Counter::new, 10);
        assertThat(counter.rpcSync(Counter::add, 2)).isEqualTo(12);
        assertThat(counter.rpcAsync(Counter::add, 5).await()).isEqualTo(17);
        assertThat(counter.remote(Counter::add, 7).toHere()).isEqualTo(24);
        assertThat(counter.rpcSync(Counter::where)).isEqualTo("worker1");
        assertThat(counter.proxy(CounterApi.class).add(1)).isEqualTo(25);
        assertThat(w(0).rpcSync("worker2", Counter::addThrough, counter, 1)).as("shared user to user").isEqualTo(26);
        assertThat(w(0).rpcSync("worker1", Counter::valueOf, counter)).as("back to its owner").isEqualTo(26);
        RRef<Integer> forwarded = w(0).remote("worker1", Ops::add, 1, 1);
        List<String> route = List.of("worker1", "worker2", "worker0", "worker2", "worker1");
        @SuppressWarnings("unchecked")
        RRef<Integer> back = (RRef<Integer>) w(0).rpcSync("worker2", Ops::forward, route, (Object) forwarded);
        assertThat(back.toHere()).isEqualTo(2);
        sum.close();
    }

    @Test
    void rrefErrorsAndCreationTimeoutsAreRaisedOnUse() {
        RRef<Integer> failing = w(0).remote("worker1", Ops::fail, "Expected error");
        assertThatThrownBy(failing::toHere).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR));
        RRef<Long> slow = w(0).to(1).withTimeout(Duration.ofMillis(100)).remote(Ops::sleepMillis, 1_000L);
        assertThatThrownBy(() -> slow.toHere(Duration.ofSeconds(10))).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
    }

    @Test
    void droppedReferencesAreDeletedOnTheirOwnersByRidingOrByThemselves() {
        int before = owners(w(1));
        RRef<Integer> first = w(0).remote("worker1", Ops::noop, 1);
        assertThat(first.toHere()).isEqualTo(1);
        first.close();
        assertThat(w(0).rpcAsync("worker1", Ops::add, 1, 2).await()).as("the delete rides on it").isEqualTo(3);
        List<RRef<Integer>> many = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            many.add(w(0).remote("worker1", Ops::noop, i));
        }
        assertThat(many.get(199).toHere()).isEqualTo(199);
        many.forEach(RRef::close); // no call follows: they travel on a timer tick
        Eventually.until("the owner holds none of them", () -> owners(w(1)) <= before);
    }

    private static int owners(RpcAgent agent) {
        return Integer.parseInt(agent.getDebugInfo().get("rref.num_owner_rrefs"));
    }

    // ---------------------------------------------------------------- peers that leave, shutdown

    @Test
    void aPeerThatDiesFailsItsCallsPromptlyAndTheOthersGoOn() {
        try (LocalCluster group = startCluster(3)) {
            RpcAgent w0 = group.agent(0);
            assertThat(w0.rpcSync("worker2", Ops::noop, 1)).isEqualTo(1);
            RpcFuture<Long> inFlight = w0.rpcAsync("worker2", Ops::sleepMillis, 20_000L);
            group.agent(2).shutdown(false, Duration.ZERO);
            for (RpcFuture<?> lost : List.of(inFlight, w0.rpcAsync("worker2", Ops::noop, 2))) {
                assertThatThrownBy(() -> lost.await(Duration.ofSeconds(10))).isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE));
            }
            assertThatThrownBy(() -> w0.rpcSync("worker2", Ops::noop, 3)).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNAVAILABLE));
            assertThat(w0.rpcSync("worker1", Ops::noop, 4)).isEqualTo(4);
            for (RpcAgent agent : group.agents()) {
                agent.shutdown(false, Duration.ZERO); // a graceful one would wait for the dead worker
            }
        }
    }

    @Test
    void workerInfosAndAllGather() {
        assertThat(w(1).getWorkerInfos()).extracting(WorkerInfo::name).containsExactly("worker0", "worker1", "worker2");
        List<Map<String, Object>> results = cluster.onEach(a -> a.allGather(a.getWorkerInfo().id() * 10));
        assertThat(results).allSatisfy(r -> assertThat(r).containsEntry("worker2", 20));
    }
}
