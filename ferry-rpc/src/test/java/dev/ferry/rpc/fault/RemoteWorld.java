package dev.ferry.rpc.fault;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.ferry.rpc.BackendRegistry;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;
import dev.ferry.rpc.testing.LocalCluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A test's world of {@code worldSize} workers on loopback: one of them ({@code remoteRank}) in a
 * JVM of its own ({@link RemoteWorkerMain}), which the test can stop ({@link #stopRemote}) or kill
 * ({@link #killRemote}); the others are agents in the test's JVM ({@link #agent}). The TCP store
 * lives in the test's JVM too, so any worker may die. Closing kills the remote JVM and shuts the
 * local agents down without waiting for anyone.
 */
final class RemoteWorld implements AutoCloseable {
    private final TcpStoreServer store;
    private final Process remote;
    private final List<RpcAgent> agents = new ArrayList<>();
    private final int remoteRank;
    private final StringBuilder output = new StringBuilder();

    private RemoteWorld(TcpStoreServer store, Process remote, int remoteRank) {
        this.store = store;
        this.remote = remote;
        this.remoteRank = remoteRank;
    }

    static RpcBackendOptions options(int storePort, Duration heartbeatTimeout) {
        return RpcBackendOptions.builder()
                .initMethod("tcp://127.0.0.1:" + storePort)
                .rendezvousTimeout(Duration.ofSeconds(60))
                .heartbeatTimeout(heartbeatTimeout)
                .applicationPackage(LocalCluster.TEST_CODE)
                .build();
    }

    static RemoteWorld start(int worldSize, int remoteRank, Duration heartbeatTimeout) throws Exception {
        TcpStoreServer store = TcpStoreServer.start("127.0.0.1", 0);
        int port = store.address().getPort();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), RemoteWorkerMain.class.getName(),
                Integer.toString(port), Integer.toString(remoteRank), Integer.toString(worldSize),
                Long.toString(heartbeatTimeout.toMillis())));
        Process remote = new ProcessBuilder(command).redirectErrorStream(true).start();
        RemoteWorld world = new RemoteWorld(store, remote, remoteRank);
        BlockingQueue<String> lines = world.readOutput();
        try {
            RpcBackendOptions options = options(port, heartbeatTimeout);
            List<CompletableFuture<RpcAgent>> starting = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                if (rank == remoteRank) {
                    continue;
                }
                int r = rank;
                starting.add(CompletableFuture.supplyAsync(() -> BackendRegistry.initBackend(BackendType.NETTY,
                        TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60)), "worker" + r, r, worldSize, options)));
            }
            for (CompletableFuture<RpcAgent> agent : starting) {
                world.agents.add(agent.get(90, TimeUnit.SECONDS));
            }
            String ready = lines.poll(90, TimeUnit.SECONDS);
            if (ready == null || !ready.startsWith("ready")) {
                throw new AssertionError("the remote worker did not start: " + world.output());
            }
            return world;
        } catch (Exception | Error e) {
            world.close();
            throw e;
        }
    }

    private BlockingQueue<String> readOutput() {
        BlockingQueue<String> ready = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(remote.getInputStream(), UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    synchronized (output) {
                        output.append(line).append('\n');
                    }
                    if (line.startsWith("ready")) {
                        ready.add(line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        });
        return ready;
    }

    /** What the remote JVM printed so far, for assertion messages. */
    String output() {
        synchronized (output) {
            return output.toString();
        }
    }

    String remoteName() {
        return "worker" + remoteRank;
    }

    /** The local agent of {@code rank} (not the remote one's). */
    RpcAgent agent(int rank) {
        return agents.stream().filter(a -> a.getWorkerInfo().id() == rank).findFirst().orElseThrow();
    }

    List<RpcAgent> agents() {
        return agents;
    }

    /** SIGSTOP: the process stays, its sockets stay open, the kernel still ACKs; it does nothing. */
    void stopRemote() throws Exception {
        signal("-STOP");
    }

    /** SIGKILL: the process dies; the kernel closes its sockets. */
    void killRemote() throws Exception {
        signal("-KILL");
        if (!remote.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("the remote worker did not die");
        }
    }

    private void signal(String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(remote.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("kill " + signal + " " + remote.pid() + " failed");
        }
    }

    @Override
    public void close() {
        remote.destroyForcibly();
        for (RpcAgent agent : agents) {
            agent.shutdown(false, Duration.ZERO);
        }
        store.close();
    }
}
