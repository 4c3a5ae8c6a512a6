package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Worlds formed through an init method of a store plug-in (etcd://, zookeeper://): run by each
 * plug-in's module against its real server, with a fresh namespace per test.
 */
@Timeout(90)
public abstract class AbstractRendezvousBackendTest {
    private static final AtomicInteger JOBS = new AtomicInteger();

    /** The init method URL of a fresh, empty namespace named {@code job} on the plug-in's server. */
    protected abstract String initMethod(String job);

    static String whoAmI() {
        return Rpc.getWorkerInfo().name();
    }

    private static List<Object> startAll(int count, int worldSize, RpcBackendOptions options) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(count);
        try {
            List<CompletableFuture<Object>> started = new ArrayList<>();
            for (int rank = 0; rank < count; rank++) {
                int r = rank;
                started.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return RpcAgents.start("worker" + r, r, worldSize, options);
                    } catch (RuntimeException e) {
                        return e;
                    }
                }, pool));
            }
            List<Object> results = new ArrayList<>();
            for (CompletableFuture<Object> future : started) {
                results.add(future.get(60, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void shutdownAll(List<Object> results) {
        results.stream().filter(RpcAgent.class::isInstance).map(RpcAgent.class::cast).toList()
                .parallelStream().forEach(RpcAgent::shutdown);
    }

    private RpcBackendOptions options(Duration rendezvousTimeout) {
        return RpcBackendOptions.builder().initMethod(initMethod("job-" + JOBS.incrementAndGet()))
                .rendezvousTimeout(rendezvousTimeout).applicationPackage(LocalCluster.TEST_CODE).build();
    }

    @Test
    void threeWorkersFormAWorldThroughTheStore() throws Exception {
        List<Object> results = startAll(3, 3, options(Duration.ofSeconds(40)));
        try {
            assertThat(results).allMatch(RpcAgent.class::isInstance);
            RpcAgent first = (RpcAgent) results.get(0);
            assertThat(first.getWorkerInfos()).extracting(WorkerInfo::name)
                    .containsExactly("worker0", "worker1", "worker2");
            assertThat(first.rpcSync("worker2", AbstractRendezvousBackendTest::whoAmI)).isEqualTo("worker2");
            RpcAgent last = (RpcAgent) results.get(2);
            assertThat(last.rpcSync("worker0", AbstractRendezvousBackendTest::whoAmI)).isEqualTo("worker0");
        } finally {
            shutdownAll(results);
        }
    }

    @Test
    void aWorkerThatNeverArrivesIsNamed() throws Exception {
        List<Object> results = startAll(2, 3, options(Duration.ofSeconds(2)));
        try {
            assertThat(results).allSatisfy(result -> assertThat(result).isInstanceOfSatisfying(RpcException.class, e -> {
                assertThat(e.code()).isEqualTo(RpcException.Code.RENDEZVOUS_FAILED);
                // a worker that timed out first leaves, and its ephemeral registration goes with it
                assertThat(e.getMessage()).containsPattern("ranks \\[(1, |0, )?2] never arrived or left");
            }));
        } finally {
            shutdownAll(results);
        }
    }
}
