package dev.ferry.store.etcd;

import dev.ferry.rpc.AbstractRendezvousBackendTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Worlds formed through {@code etcd://} init methods on a real etcd. */
class EtcdRendezvousTest extends AbstractRendezvousBackendTest {
    private static EtcdServer etcd;

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdServer.start();
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    protected String initMethod(String job) {
        return "etcd://" + etcd.endpoint() + "/ferry-test/" + job;
    }
}
