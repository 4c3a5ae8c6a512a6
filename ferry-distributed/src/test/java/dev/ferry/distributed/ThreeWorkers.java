package dev.ferry.distributed;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Test classes extending this share one group of three workers over loopback per class. */
public abstract class ThreeWorkers {
    protected static LocalCluster cluster;
    /** The worker the tests call from. */
    protected static RpcAgent worker0;

    @BeforeAll
    static void startWorkers() {
        cluster = LocalCluster.start(3);
        worker0 = cluster.agent(0);
    }

    @AfterAll
    static void stopWorkers() {
        cluster.close();
    }
}
