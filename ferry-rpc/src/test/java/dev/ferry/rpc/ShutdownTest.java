package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class ShutdownTest {

    private static Set<String> ferryThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(name -> name.startsWith("ferry-"))
                .collect(Collectors.toSet());
    }

    @Test
    void aClosedGroupLeavesNoThreadTheJvmWaitsForAtExit(@TempDir Path dir) throws Exception {
        // Netty notified its loops' termination on GlobalEventExecutor, a non-daemon thread that
        // stays a second after its last task: every worker JVM exited up to a second late.
        String output = FreshJvm.run(dir.resolve("exit.log"), List.of(), ExitProbeMain.class);

        assertThat(output).contains("non-daemon threads after shutdown: []");
    }

    @Test
    void gracefulShutdownWaitsForOutstandingWorkEverywhere() {
        LocalCluster cluster = LocalCluster.start(3);
        List<RpcFuture<Long>> direct = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            direct.add(cluster.agent(0).rpcAsync("worker1", Ops::sleepMillis, 300L));
        }
        // nested work: worker1 relays to worker2 while everyone is already shutting down
        RpcFuture<Integer> nested = cluster.agent(2).rpcAsync("worker1", Ops::relay, "worker2", 9);
        cluster.close(); // every worker calls shutdown() at the same time
        assertThat(RpcFuture.waitAll(direct)).containsOnly(300L);
        assertThat(nested.await()).isEqualTo(9);
    }

    /**
     * A {@code toHere()} whose fetch is on its way when the program shuts down gets its value: the
     * fetch is Ferry's own call, but it is made for the application, so graceful shutdown waits for
     * it as for the program's calls (it failed with SHUTDOWN when the idle rounds did not count it).
     */
    @Test
    void gracefulShutdownWaitsForAFetchInFlight() throws Exception {
        LocalCluster cluster = LocalCluster.start(2, options -> options.faultInjection(FaultInjection.builder()
                .delay(Duration.ofMillis(1_500), MessageType.RREF_FETCH_CALL).build()));
        RRef<Object> rref = cluster.agent(0).remote("worker1", Ops::identity, "the value");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(rref::confirmedByOwner);

        CompletableFuture<Object> fetched = CompletableFuture.supplyAsync(rref::toHere);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> cluster.agent(0).getDebugInfo().get("agent.client_active_calls").equals("1"));
        cluster.close();

        assertThat(fetched.get(10, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("the value");
    }

    @Test
    void nonGracefulShutdownFailsPendingCalls() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            RpcFuture<Long> pending = cluster.agent(0).rpcAsync("worker1", Ops::sleepMillis, 10_000L);
            cluster.agent(0).shutdown(false, Duration.ZERO);
            assertThatThrownBy(() -> pending.await(Duration.ofSeconds(10))).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.code()).isEqualTo(RpcException.Code.SHUTDOWN));
            cluster.agent(1).shutdown(false, Duration.ZERO);
        }
    }

    @Test
    void shutdownIsIdempotentAndTheAgentRefusesUseAfterwards() {
        LocalCluster cluster = LocalCluster.start(2);
        cluster.close();
        RpcAgent agent = cluster.agent(0);
        agent.shutdown();
        agent.shutdown(false, Duration.ZERO);
        assertThat(agent.isRunning()).isFalse();
        assertThatThrownBy(() -> agent.rpcSync("worker1", Ops::noop, 1)).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.SHUTDOWN));
        assertThatThrownBy(agent::getWorkerInfos).isInstanceOf(RpcException.class);
        assertThatThrownBy(() -> agent.allGather(1)).isInstanceOf(RpcException.class);
    }

    @Test
    void gracefulShutdownTimesOutWhenAWorkerNeverArrivesAndStillClosesLocally() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            assertThatThrownBy(() -> cluster.agent(0).shutdown(true, Duration.ofMillis(500)))
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
            assertThat(cluster.agent(0).isRunning()).isFalse();
            cluster.agent(1).shutdown(false, Duration.ZERO);
        }
    }

    /** Open sockets of this process (Linux): the file descriptors that are sockets. */
    private static long openSockets() throws java.io.IOException {
        try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return java.nio.file.Files.readSymbolicLink(fd).toString().startsWith("socket:");
                } catch (java.io.IOException e) {
                    return false;
                }
            }).count();
        }
    }

    @Test
    void noThreadsOrSocketsLeak() throws Exception {
        Set<String> before = ferryThreads();
        long socketsBefore = -1;
        for (int round = 0; round < 3; round++) {
            if (round == 1) {
                // counted after a first round: the JDK and Netty open a few process-wide sockets once
                socketsBefore = openSockets();
            }
            try (LocalCluster cluster = LocalCluster.start(3)) {
                List<CompletableFuture<Integer>> calls = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    calls.add(cluster.agent(i % 3).rpcAsync("worker" + ((i + 1) % 3), Ops::add, i, 1).toCompletableFuture());
                }
                CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();
            }
        }
        assertThat(ferryThreads()).isEqualTo(before);
        assertThat(openSockets()).isLessThanOrEqualTo(socketsBefore);
    }

    @Test
    void allGatherWithSeveralRoundsLinesUp() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            List<List<Object>> rounds = cluster.onEach(agent -> {
                List<Object> seen = new ArrayList<>();
                for (int round = 0; round < 5; round++) {
                    seen.add(agent.allGather(agent.getWorkerInfo().id() + round * 100).get("worker2"));
                }
                return seen;
            });
            for (List<Object> seen : rounds) {
                assertThat(seen).containsExactly(2, 102, 202, 302, 402);
            }
        }
    }
}
