package dev.ferry.store.etcd;

import dev.ferry.rpc.store.AbstractSessionStoreContractTest;
import dev.ferry.rpc.store.Store;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store contract, sessions included, against an {@link EtcdStore} on a real etcd. */
class EtcdStoreContractTest extends AbstractSessionStoreContractTest {
    private static final AtomicInteger JOBS = new AtomicInteger();
    private static EtcdServer etcd;
    private String prefix;

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
    protected Store createStore(Duration timeout) {
        prefix = "/ferry-test/job-" + JOBS.incrementAndGet(); // a fresh, empty namespace per test
        return open(timeout);
    }

    private Store open(Duration timeout) {
        return EtcdStore.builder().endpoint(etcd.endpoint()).prefix(prefix).timeout(timeout)
                .sessionTtl(Duration.ofSeconds(2)).connect();
    }

    @Override
    protected Store secondHandle(Store store) {
        return open(store.timeout());
    }

    @Override
    protected String initMethod() {
        return "etcd://" + etcd.endpoint() + prefix + "?session_ttl_s=2";
    }

    @Override
    protected Duration sessionExpiry() {
        return Duration.ofSeconds(2);
    }
}
