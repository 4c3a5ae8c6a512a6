package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;

import java.util.List;

/**
 * Runs a two-worker group in a fresh JVM, closes it, and prints the threads left that are not
 * daemons (the JVM waits for them before it exits once main returns): {@link ShutdownTest}.
 */
public final class ExitProbeMain {
    private ExitProbeMain() {
    }

    public static void main(String[] args) {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            if (cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2) != 3) {
                throw new AssertionError("the call failed");
            }
        }
        List<String> left = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && !thread.isDaemon() && thread != Thread.currentThread())
                .map(Thread::getName)
                .toList();
        System.out.println("non-daemon threads after shutdown: " + left);
    }
}
