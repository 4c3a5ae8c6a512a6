package dev.ferry.store.zookeeper;

import dev.ferry.rpc.spi.StoreAddress;
import dev.ferry.rpc.spi.StoreProvider;
import dev.ferry.rpc.store.Store;
import java.time.Duration;
import java.util.Set;

/** Opens {@code zookeeper://host:port[,host:port][/path][?session_timeout_ms=N]} init methods as {@link ZooKeeperStore}s. */
public final class ZooKeeperStoreProvider implements StoreProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("zookeeper");
    }

    @Override
    public Store open(StoreAddress address, Duration timeout) {
        address.requireKnownParameters(Set.of("session_timeout_ms"));
        ZooKeeperStore.Builder builder = ZooKeeperStore.builder().timeout(timeout)
                .connectString(String.join(",", address.endpoints()))
                .sessionTimeout(Duration.ofMillis(address.longParameter("session_timeout_ms",
                        ZooKeeperStore.DEFAULT_SESSION_TIMEOUT.toMillis())));
        if (!address.path().isEmpty()) {
            builder.path(address.path());
        }
        return builder.connect();
    }
}
