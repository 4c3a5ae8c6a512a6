package dev.ferry.rpc.testing;

import dev.ferry.rpc.BackendRegistry;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * A rendezvous store held by the test, as an external one (etcd, ZooKeeper) would be, that
 * workers join one by one whenever the test says: for worlds whose members change while they run
 * (world size 0 joins without a fixed size, so any member may leave), and for restarts into a
 * fixed-size world. Unlike {@link LocalCluster} no worker holds the store. Closing stops every
 * worker still running at once (not gracefully: a test may have left the world half gone), then
 * the store.
 *
 * <pre>{@code
 * try (DynamicWorld world = DynamicWorld.start()) {
 *     RpcAgent zero = world.join(0, 0);
 *     RpcAgent one = world.join(1, 0);
 *     zero.shutdown(); // leaves; worker1 runs on
 * }
 * }</pre>
 */
public final class DynamicWorld implements AutoCloseable {
    private static final Duration STEP = Duration.ofSeconds(30);
    private final TcpStoreServer store;
    private final List<RpcAgent> agents = new CopyOnWriteArrayList<>();

    private DynamicWorld(TcpStoreServer store) {
        this.store = store;
    }

    /** A new store on a free loopback port, with no worker yet. */
    public static DynamicWorld start() {
        return new DynamicWorld(TcpStoreServer.start("127.0.0.1", 0));
    }

    /**
     * Starts worker {@code "worker" + rank} against the store and returns it once its rendezvous
     * is done ({@code worldSize} 0: a world without a fixed size). Thread-safe: workers may join
     * together.
     */
    public RpcAgent join(int rank, int worldSize) {
        return join(rank, worldSize, b -> b);
    }

    /** As {@link #join(int, int)}, with options of this worker's own (fault injection, say). */
    public RpcAgent join(int rank, int worldSize, UnaryOperator<RpcBackendOptions.Builder> own) {
        int port = store.address().getPort();
        RpcBackendOptions options = own.apply(RpcBackendOptions.builder()
                .initMethod("tcp://127.0.0.1:" + port)
                .rendezvousTimeout(STEP)
                .applicationPackage(LocalCluster.TEST_CODE))
                .build();
        RpcAgent agent = BackendRegistry.initBackend(BackendType.NETTY,
                TcpStore.connect("127.0.0.1", port, STEP), "worker" + rank, rank, worldSize, options);
        agents.add(agent);
        return agent;
    }

    @Override
    public void close() {
        agents.forEach(agent -> agent.shutdown(false, Duration.ZERO));
        store.close();
    }
}
