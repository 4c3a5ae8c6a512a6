package dev.ferry.rpc;

import dev.ferry.rpc.testing.Eventually;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code rpcSync(...)} behaves as {@code rpcAsync(...).await()} in every way a program can see,
 * whichever route the transport takes for it (an {@code rpcSync} goes over a lane when one is idle,
 * an {@code rpcAsync} never does): the same results and errors (codes and messages), the same
 * timeouts, the same handling of an interrupted caller (the caller gives up, the call goes on and
 * completes), and the same place for the handler (a request thread of its agent, which may block).
 * Each test runs both ways.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SyncIsAsyncThenAwaitTest {
    private LocalCluster cluster;
    static volatile CountDownLatch gate = new CountDownLatch(0);
    static volatile CountDownLatch entered = new CountDownLatch(0);

    /** How the caller waits. */
    enum Waiting {
        RPC_SYNC {
            @Override
            <A, R> R call(RpcAgent agent, Duration timeout, RpcFunction1<A, R> function, A argument) {
                return agent.to("worker1").withTimeout(timeout).rpcSync(function, argument);
            }
        },
        RPC_ASYNC_AWAIT {
            @Override
            <A, R> R call(RpcAgent agent, Duration timeout, RpcFunction1<A, R> function, A argument) {
                return agent.to("worker1").withTimeout(timeout).rpcAsync(function, argument).await();
            }
        };

        abstract <A, R> R call(RpcAgent agent, Duration timeout, RpcFunction1<A, R> function, A argument);

        <A, R> R call(RpcAgent agent, RpcFunction1<A, R> function, A argument) {
            return call(agent, Duration.ofSeconds(30), function, argument);
        }
    }

    /**
     * Where the handler runs: one of its agent's request threads, which may block, never a
     * transport thread. Which kind (a platform thread kept warm, or a fresh virtual thread) is the
     * callee's choice, by what is free, whichever way the caller waits.
     */
    public static String requestThread(int x) {
        return "agent " + Rpc.current().getWorkerInfo().name() + ", may block "
                + !dev.ferry.rpc.internal.concurrent.NonBlockingThreads.currentIsNonBlocking();
    }

    public static int gated(int x) throws InterruptedException {
        entered.countDown();
        if (!gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("gate never opened");
        }
        return x;
    }

    /** Blocks on a call back to the caller. */
    public static int nested(int x) {
        return Rpc.rpcSync("worker0", Ops::noop, x);
    }

    public static byte[] bytes(int size) {
        return new byte[size];
    }

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(2, b -> b.maxMessageBytes(1 << 20));
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private RpcAgent caller() {
        return cluster.agent(0);
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void resultsAndRemoteErrors(Waiting waiting) {
        assertThat(waiting.call(caller(), Ops::noop, 41)).isEqualTo(41);
        assertThatThrownBy(() -> waiting.call(caller(), Ops::fail, "Expected error"))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
                    assertThat(e.remoteClassName()).isEqualTo(IllegalArgumentException.class.getName());
                    assertThat(e).hasMessage("On worker1: java.lang.IllegalArgumentException: Expected error");
                });
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void refusedFunctionsAndOversizedMessages(Waiting waiting) {
        RpcFunction1<String, String> property = System::getProperty;
        assertThatThrownBy(() -> waiting.call(caller(), property, "user.home"))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION))
                .hasMessageContaining("JDK class java.lang.System");
        assertThatThrownBy(() -> waiting.call(caller(), Ops::identity, (Object) new byte[2 << 20]))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR))
                .hasMessageContaining("exceeds the maximum message size of 1048576 bytes");
        assertThatThrownBy(() -> waiting.call(caller(), SyncIsAsyncThenAwaitTest::bytes, 2 << 20))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.PROTOCOL_ERROR))
                .hasMessageContaining("exceeds the maximum message size of 1048576 bytes");
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void timeouts(Waiting waiting) {
        gate = new CountDownLatch(1);
        try {
            assertThatThrownBy(() -> waiting.call(caller(), Duration.ofMillis(300), SyncIsAsyncThenAwaitTest::gated, 1))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT))
                    .hasMessage("RPC ran for more than set timeout (300 ms) and will now be marked with an error:"
                            + " SyncIsAsyncThenAwaitTest::gated on worker1");
        } finally {
            gate.countDown();
        }
        assertThat(waiting.call(caller(), Ops::noop, 2)).isEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void anInterruptedCallerGivesUpWhileItsCallGoesOnAndCompletes(Waiting waiting) throws Exception {
        RpcAgent agent = caller();
        long succeeded = counter(agent, "agent.calls_succeeded");
        long failed = counter(agent, "agent.calls_failed");
        gate = new CountDownLatch(1);
        entered = new CountDownLatch(1);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try {
                waiting.call(agent, SyncIsAsyncThenAwaitTest::gated, 7);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError("flag cleared", e));
            }
        });
        try {
            thread.start();
            assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
            thread.interrupt();
            assertThat(outcome.get(30, TimeUnit.SECONDS)).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.INTERNAL);
                assertThat(e.getCause()).isInstanceOf(InterruptedException.class);
            });
            assertThat(counter(agent, "agent.calls_failed")).as("the call is not failed").isEqualTo(failed);
        } finally {
            gate.countDown();
        }
        Eventually.until("the call completes", () -> counter(agent, "agent.calls_succeeded") == succeeded + 1);
        assertThat(counter(agent, "agent.calls_failed")).isEqualTo(failed);
        assertThat(waiting.call(agent, Ops::noop, 3)).isEqualTo(3);
    }

    @ParameterizedTest
    @EnumSource(Waiting.class)
    void theHandlerRunsOnARequestThreadThatMayBlock(Waiting waiting) {
        for (int i = 0; i < 20; i++) {
            assertThat(waiting.call(caller(), SyncIsAsyncThenAwaitTest::requestThread, i))
                    .isEqualTo("agent worker1, may block true");
        }
        assertThat(waiting.call(caller(), SyncIsAsyncThenAwaitTest::nested, 5)).as("a nested call").isEqualTo(5);
    }

    private static long counter(RpcAgent agent, String key) {
        return Long.parseLong(agent.getDebugInfo().get(key));
    }
}
