package dev.ferry.rpc.testing;

import dev.ferry.rpc.BackendRegistry;
import dev.ferry.rpc.BackendType;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * N workers in this JVM, connected over loopback TCP (or, with {@link BackendType#IN_PROCESS}, in
 * process), for tests. Workers are started through {@link BackendRegistry#initBackend}, as
 * {@code initRpc} starts them. Closing shuts them all down
 * gracefully, in parallel, with a bounded wait, and then the store.
 *
 * <p>The workers declare the tests' code the application's ({@value #TEST_CODE}: Ferry's tests live
 * in Ferry's packages but are compiled apart from its modules, so its own classes stay refused);
 * {@code b -> b.applicationPackages(List.of(...))} replaces that.
 *
 * <pre>{@code
 * try (LocalCluster cluster = LocalCluster.start(3)) {
 *     assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
 * }
 * }</pre>
 */
public final class LocalCluster implements AutoCloseable {
    private static final Duration STEP = Duration.ofSeconds(30);
    /** The application package the workers declare unless the options say otherwise. */
    public static final String TEST_CODE = "dev.ferry";

    /**
     * The threads that start and stop the workers: daemons, since a pool's thread still ends for a
     * moment after {@code shutdownNow} returns, and a JVM whose main has returned waits for every
     * thread that is not one ({@code ShutdownTest}'s fresh JVM fails on any left).
     */
    private static final java.util.concurrent.ThreadFactory THREADS =
            Thread.ofPlatform().daemon().name("local-cluster-", 0).factory();

    private final TcpStoreServer server;
    private final List<RpcAgent> agents;

    private LocalCluster(TcpStoreServer server, List<RpcAgent> agents) {
        this.server = server;
        this.agents = agents;
    }

    public static LocalCluster start(int worldSize) {
        return start(worldSize, b -> b);
    }

    public static LocalCluster start(int worldSize, UnaryOperator<RpcBackendOptions.Builder> options) {
        return start(worldSize, BackendType.NETTY, options);
    }

    public static LocalCluster start(int worldSize, BackendType backend) {
        return start(worldSize, backend, b -> b);
    }

    public static LocalCluster start(int worldSize, BackendType backend,
                                     UnaryOperator<RpcBackendOptions.Builder> options) {
        TcpStoreServer server = TcpStoreServer.start("127.0.0.1", 0);
        int port = server.address().getPort();
        RpcBackendOptions opts = options.apply(RpcBackendOptions.builder()
                .initMethod("tcp://127.0.0.1:" + port)
                .rendezvousTimeout(STEP)
                .applicationPackage(TEST_CODE)).build();
        ExecutorService starter = Executors.newFixedThreadPool(worldSize, THREADS);
        List<java.util.concurrent.CompletableFuture<RpcAgent>> starting = new ArrayList<>();
        try {
            for (int rank = 0; rank < worldSize; rank++) {
                int r = rank;
                starting.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    TcpStore store = TcpStore.connect("127.0.0.1", port, STEP);
                    return BackendRegistry.initBackend(backend, store, "worker" + r, r, worldSize, opts);
                }, starter));
            }
            // fails as soon as any worker fails, so the first error is the one reported
            java.util.concurrent.CompletableFuture.anyOf(starting.stream()
                    .map(f -> f.thenApply(a -> (Object) a).exceptionallyCompose(java.util.concurrent.CompletableFuture::failedFuture)
                            .handle((a, e) -> e == null ? null : e)).filter(x -> true)
                    .toArray(java.util.concurrent.CompletableFuture[]::new));
            java.util.concurrent.CompletableFuture.allOf(starting.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .get(STEP.toSeconds(), TimeUnit.SECONDS);
            List<RpcAgent> agents = new ArrayList<>();
            for (java.util.concurrent.CompletableFuture<RpcAgent> future : starting) {
                agents.add(future.join());
            }
            return new LocalCluster(server, agents);
        } catch (Exception e) {
            for (java.util.concurrent.CompletableFuture<RpcAgent> future : starting) {
                if (future.isDone() && !future.isCompletedExceptionally()) {
                    future.join().shutdown(false, Duration.ZERO);
                } else if (future.isCompletedExceptionally()) {
                    future.exceptionally(error -> {
                        e.addSuppressed(error);
                        return null;
                    });
                }
            }
            server.close();
            throw new IllegalStateException("cluster did not start: " + e, e);
        } finally {
            starter.shutdownNow();
        }
    }

    public RpcAgent agent(int rank) {
        return agents.get(rank);
    }

    public List<RpcAgent> agents() {
        return agents;
    }

    public int size() {
        return agents.size();
    }

    /** Runs {@code action} on every agent at once (as every worker of a real group would). */
    public <T> List<T> onEach(java.util.function.Function<RpcAgent, T> action) {
        ExecutorService pool = Executors.newFixedThreadPool(agents.size(), THREADS);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (RpcAgent agent : agents) {
                futures.add(pool.submit(() -> action.apply(agent)));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get(STEP.toSeconds() + 15, TimeUnit.SECONDS));
            }
            return results;
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Graceful shutdown of every agent, in parallel. */
    @Override
    public void close() {
        try {
            onEach(agent -> {
                agent.shutdown(true, STEP);
                return null;
            });
        } finally {
            for (RpcAgent agent : agents) {
                agent.shutdown(false, Duration.ZERO);
            }
            server.close();
        }
    }
}
