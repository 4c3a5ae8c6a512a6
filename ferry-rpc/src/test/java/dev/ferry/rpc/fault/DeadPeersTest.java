package dev.ferry.rpc.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Workers that die or hang while the group runs, in a JVM of their own: a stopped one (SIGSTOP,
 * which no socket error reports) is found by heartbeats within the bound, a killed one by its
 * closed connections; either way its calls fail {@code UNAVAILABLE} naming it, and the survivors'
 * graceful shutdown completes without it and says who was missing.
 */
@Timeout(180)
class DeadPeersTest {
    private static final Duration BOUND = Duration.ofSeconds(1);

    @Test
    void aStoppedWorkerIsFoundWithinTheBoundItsCallsFailAndShutdownGoesOnWithoutIt() throws Exception {
        try (RemoteWorld world = RemoteWorld.start(3, 2, BOUND)) {
            RpcAgent zero = world.agent(0);
            assertThat(zero.rpcSync("worker2", Ops::add, 2, 3)).isEqualTo(5);
            assertThat(world.agent(1).rpcSync("worker2", Ops::add, 2, 3)).isEqualTo(5);

            world.stopRemote();
            long start = System.nanoTime();
            RpcFuture<Long> stuck = zero.to("worker2").withTimeout(Duration.ofSeconds(60)).rpcAsync(Ops::sleepMillis, 1L);
            assertThatThrownBy(stuck::await).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).as(e.toString()).isEqualTo(RpcException.Code.UNAVAILABLE);
                assertThat(e.getMessage()).contains("worker2", "heartbeat");
            });
            long detectMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // The bound plus a fifth, with room for a loaded machine; far below the call's 60 s.
            assertThat(detectMillis).as("detected after %d ms", detectMillis).isLessThan(15_000);
            System.err.println("DeadPeersTest: a stopped worker's call failed after " + detectMillis + " ms (bound "
                    + BOUND.toMillis() + " ms)");

            shutDownTheSurvivorsGracefully(world, "worker2");
        }
    }

    @Test
    void aKilledRankZeroFailsItsCallsAtOnceAndTheOthersShutDownWithoutIt() throws Exception {
        // No heartbeats: a killed process's connections close, which is enough. Rank 0 leads the
        // group's gathers, so the survivors' shutdown must find another leader.
        try (RemoteWorld world = RemoteWorld.start(3, 0, Duration.ZERO)) {
            RpcAgent one = world.agent(1);
            assertThat(one.rpcSync("worker0", Ops::add, 2, 3)).isEqualTo(5);
            RpcFuture<Long> inFlight = one.to("worker0").withTimeout(Duration.ofSeconds(60))
                    .rpcAsync(Ops::sleepMillis, 30_000L);

            world.killRemote();
            assertThatThrownBy(inFlight::await).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).as(e.toString()).isEqualTo(RpcException.Code.UNAVAILABLE);
                assertThat(e.getMessage()).contains("worker0");
            });
            shutDownTheSurvivorsGracefully(world, "worker0");
        }
    }

    /** Every local agent shuts down gracefully at once; each completes and names {@code missing}. */
    private static void shutDownTheSurvivorsGracefully(RemoteWorld world, String missing) throws Exception {
        long start = System.nanoTime();
        List<CompletableFuture<Void>> shutdowns = world.agents().stream()
                .map(agent -> CompletableFuture.runAsync(() -> agent.shutdown(true, Duration.ofSeconds(60))))
                .toList();
        for (CompletableFuture<Void> shutdown : shutdowns) {
            shutdown.get(90, TimeUnit.SECONDS); // throws if a graceful shutdown failed
        }
        System.err.println("DeadPeersTest: the survivors shut down gracefully in "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms without " + missing);
        for (RpcAgent agent : world.agents()) {
            assertThat(agent.isRunning()).isFalse();
            assertThat(agent.getDebugInfo().get("agent.shutdown.missing")).as(agent.getWorkerInfo().name())
                    .startsWith(missing + ": ");
        }
    }
}
