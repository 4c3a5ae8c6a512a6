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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A test's world of {@code worldSize} workers on loopback: some of them (the remote ranks) in JVMs
 * of their own ({@link RemoteWorkerMain}), which the test can stop ({@link #stop}), resume
 * ({@link #resume}) or kill ({@link #kill}); the others are agents in the test's JVM
 * ({@link #agent}). The TCP store lives in the test's JVM too, so any worker may die. Closing kills
 * the remote JVMs and shuts the local agents down without waiting for anyone.
 */
final class RemoteWorld implements AutoCloseable {
    private final TcpStoreServer store;
    /** The remote JVMs by rank, the first the one {@link #stopRemote} and {@link #killRemote} mean. */
    private final Map<Integer, Process> remotes;
    private final List<RpcAgent> agents = new ArrayList<>();
    private final int remoteRank;
    private final StringBuilder output = new StringBuilder();

    private RemoteWorld(TcpStoreServer store, Map<Integer, Process> remotes, int remoteRank) {
        this.store = store;
        this.remotes = remotes;
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
        return start(worldSize, List.of(remoteRank), heartbeatTimeout);
    }

    /** A world whose {@code remoteRanks} run in JVMs of their own, each started at once. */
    static RemoteWorld start(int worldSize, List<Integer> remoteRanks, Duration heartbeatTimeout) throws Exception {
        TcpStoreServer store = TcpStoreServer.start("127.0.0.1", 0);
        int port = store.address().getPort();
        Map<Integer, Process> remotes = new LinkedHashMap<>();
        RemoteWorld world = new RemoteWorld(store, remotes, remoteRanks.get(0));
        try {
            for (int remoteRank : remoteRanks) {
                List<String> command = new ArrayList<>(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
                        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "-cp", System.getProperty("java.class.path"), RemoteWorkerMain.class.getName(),
                        Integer.toString(port), Integer.toString(remoteRank), Integer.toString(worldSize),
                        Long.toString(heartbeatTimeout.toMillis())));
                remotes.put(remoteRank, new ProcessBuilder(command).redirectErrorStream(true).start());
            }
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            remotes.values().forEach(remote -> world.readOutput(remote, lines));
            RpcBackendOptions options = options(port, heartbeatTimeout);
            List<CompletableFuture<RpcAgent>> starting = new ArrayList<>();
            for (int rank = 0; rank < worldSize; rank++) {
                if (remotes.containsKey(rank)) {
                    continue;
                }
                int r = rank;
                starting.add(CompletableFuture.supplyAsync(() -> BackendRegistry.initBackend(BackendType.NETTY,
                        TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60)), "worker" + r, r, worldSize, options)));
            }
            for (CompletableFuture<RpcAgent> agent : starting) {
                world.agents.add(agent.get(90, TimeUnit.SECONDS));
            }
            for (int i = 0; i < remotes.size(); i++) {
                String ready = lines.poll(90, TimeUnit.SECONDS);
                if (ready == null) {
                    throw new AssertionError("a remote worker did not start: " + world.output());
                }
            }
            return world;
        } catch (Exception | Error e) {
            world.close();
            throw e;
        }
    }

    /** Copies what {@code remote} prints into {@link #output}, and its {@code ready} line into {@code ready}. */
    private void readOutput(Process remote, BlockingQueue<String> ready) {
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
    }

    /** What the remote JVMs printed so far, for assertion messages. */
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

    /** SIGSTOP of the (first) remote worker. */
    void stopRemote() throws Exception {
        stop(remoteRank);
    }

    /** SIGKILL of the (first) remote worker. */
    void killRemote() throws Exception {
        kill(remoteRank);
    }

    /**
     * SIGSTOP: the process stays, its sockets stay open, the kernel still ACKs; it does nothing.
     * Returns once every thread of the process is stopped: {@code kill} returns when the signal is
     * sent, and on a loaded machine the process's threads may run on for a while (long enough to
     * answer a call made right after, which a test then took for a stopped worker answering).
     */
    void stop(int rank) throws Exception {
        signal(rank, "-STOP");
        long pid = remotes.get(rank).pid();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!allThreadsStopped(pid)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("worker " + rank + " (pid " + pid + ") not stopped 30 s after SIGSTOP");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // a poll, not a spin: the CPU is the stopping process's
        }
    }

    /** Whether every thread of {@code pid} is in state T (stopped), read from /proc/PID/task/TID/stat. */
    private static boolean allThreadsStopped(long pid) throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return tasks.allMatch(task -> {
                try {
                    String stat = Files.readString(task.resolve("stat"));
                    // "tid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses).
                    return stat.charAt(stat.lastIndexOf(')') + 2) == 'T';
                } catch (IOException gone) {
                    return true; // a thread that ended meanwhile runs nothing
                }
            });
        }
    }

    /** SIGCONT: a stopped process goes on. */
    void resume(int rank) throws Exception {
        signal(rank, "-CONT");
    }

    /** SIGKILL: the process dies; the kernel closes its sockets. */
    void kill(int rank) throws Exception {
        signal(rank, "-KILL");
        if (!remotes.get(rank).waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("remote worker" + rank + " did not die");
        }
    }

    private void signal(int rank, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(remotes.get(rank).pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("kill " + signal + " " + remotes.get(rank).pid() + " failed");
        }
    }

    @Override
    public void close() {
        remotes.values().forEach(Process::destroyForcibly);
        for (RpcAgent agent : agents) {
            agent.shutdown(false, Duration.ZERO);
        }
        store.close();
    }
}
