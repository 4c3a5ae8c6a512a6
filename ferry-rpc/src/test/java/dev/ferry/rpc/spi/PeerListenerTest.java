package dev.ferry.rpc.spi;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link PeerListener}s (this one found by {@link java.util.ServiceLoader} in the test class path)
 * hear of a peer that goes away while the group runs, and not of a graceful shutdown.
 */
@Timeout(60)
class PeerListenerTest {
    /** The peers each worker heard were lost, by worker name (every agent of this JVM reports here). */
    private static final Map<String, List<String>> HEARD = new ConcurrentHashMap<>();

    /** Public for {@link java.util.ServiceLoader}. */
    public static final class Recorder implements PeerListener {
        @Override
        public void onPeerLost(RpcAgent agent, WorkerInfo peer) {
            HEARD.computeIfAbsent(agent.getWorkerInfo().name(), a -> new CopyOnWriteArrayList<>()).add(peer.name());
        }
    }

    @Test
    void theSurvivorsHearOfAPeerThatDiesAndNobodyOfAGracefulShutdown() {
        try (LocalCluster cluster = LocalCluster.start(3)) {
            HEARD.clear();
            RpcAgent w0 = cluster.agent(0);
            RpcAgent w1 = cluster.agent(1);
            w0.rpcSync("worker2", Ops::add, 1, 2);
            w1.rpcSync("worker2", Ops::add, 1, 2);
            cluster.agent(2).shutdown(false, Duration.ZERO); // worker2 dies

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(HEARD.get("worker0")).isNotEmpty().containsOnly("worker2");
                assertThat(HEARD.get("worker1")).isNotEmpty().containsOnly("worker2");
            });
            assertThat(HEARD).doesNotContainKey("worker2");
            w0.shutdown(false, Duration.ZERO);
            w1.shutdown(false, Duration.ZERO);
        }
        try (LocalCluster cluster = LocalCluster.start(2)) {
            HEARD.clear();
            cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2);
            cluster.agent(1).rpcSync("worker0", Ops::add, 1, 2);
            cluster.close(); // graceful: both shut down together
            assertThat(HEARD).isEmpty();
        }
    }
}
