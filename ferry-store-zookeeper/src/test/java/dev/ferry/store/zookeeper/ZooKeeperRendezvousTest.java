package dev.ferry.store.zookeeper;

import dev.ferry.rpc.AbstractRendezvousBackendTest;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Worlds formed through {@code zookeeper://} init methods on a real ZooKeeper in this JVM. */
class ZooKeeperRendezvousTest extends AbstractRendezvousBackendTest {
    private static TestingServer zookeeper;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zookeeper = new TestingServer(true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        if (zookeeper != null) {
            zookeeper.close();
        }
    }

    @Override
    protected String initMethod(String job) {
        return "zookeeper://" + zookeeper.getConnectString() + "/ferry-test/" + job;
    }
}
