package dev.ferry.store.zookeeper;

import dev.ferry.rpc.store.AbstractSessionStoreContractTest;
import dev.ferry.rpc.store.Store;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store contract, sessions included, against a {@link ZooKeeperStore} on a real ZooKeeper in this JVM. */
class ZooKeeperStoreContractTest extends AbstractSessionStoreContractTest {
    private static final AtomicInteger JOBS = new AtomicInteger();
    /** ZooKeeper grants sessions of 2 to 20 ticks; 500 ms ticks let a dead process's session end within 2 s. */
    private static final int TICK_MILLIS = 500;
    private static TestingServer zookeeper;
    private String path;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, TICK_MILLIS, -1), true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    @Override
    protected Store createStore(Duration timeout) {
        path = "/ferry-test/job-" + JOBS.incrementAndGet(); // a fresh, empty namespace per test
        return open(timeout);
    }

    private Store open(Duration timeout) {
        return ZooKeeperStore.builder().connectString(zookeeper.getConnectString()).path(path).timeout(timeout)
                .sessionTimeout(Duration.ofSeconds(2)).connect();
    }

    @Override
    protected Store secondHandle(Store store) {
        return open(store.timeout());
    }

    @Override
    protected String initMethod() {
        return "zookeeper://" + zookeeper.getConnectString() + path + "?session_timeout_ms=2000";
    }

    @Override
    protected Duration sessionExpiry() {
        return Duration.ofSeconds(2);
    }
}
