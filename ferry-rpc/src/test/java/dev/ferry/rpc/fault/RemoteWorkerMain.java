package dev.ferry.rpc.fault;

import dev.ferry.rpc.BackendRegistry;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.store.TcpStore;

import java.time.Duration;

/**
 * One worker of a test's world in a JVM of its own, so the test can stop or kill it:
 * {@code RemoteWorkerMain STORE_PORT RANK WORLD_SIZE HEARTBEAT_MILLIS}. Joins through the test's
 * TCP store on loopback, prints {@code ready}, and then serves until the test kills it (it never
 * shuts down by itself).
 */
public final class RemoteWorkerMain {
    private RemoteWorkerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = Integer.parseInt(args[0]);
        int rank = Integer.parseInt(args[1]);
        int worldSize = Integer.parseInt(args[2]);
        RpcBackendOptions options = RemoteWorld.options(port, Duration.ofMillis(Long.parseLong(args[3])));
        TcpStore store = TcpStore.connect("127.0.0.1", port, Duration.ofSeconds(60));
        RpcAgent agent = BackendRegistry.initBackend(BackendType.NETTY, store, "worker" + rank, rank, worldSize, options);
        System.out.println("ready " + agent.getWorkerInfo().name() + " " + ProcessHandle.current().pid());
        Thread.currentThread().join(); // until killed
    }
}
