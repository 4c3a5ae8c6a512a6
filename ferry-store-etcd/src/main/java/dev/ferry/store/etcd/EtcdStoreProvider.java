package dev.ferry.store.etcd;

import dev.ferry.rpc.spi.StoreAddress;
import dev.ferry.rpc.spi.StoreProvider;
import dev.ferry.rpc.store.Store;
import java.time.Duration;
import java.util.Set;

/** Opens {@code etcd://host:port[,host:port][/prefix][?session_ttl_s=N]} init methods as {@link EtcdStore}s. */
public final class EtcdStoreProvider implements StoreProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("etcd");
    }

    @Override
    public Store open(StoreAddress address, Duration timeout) {
        address.requireKnownParameters(Set.of("session_ttl_s"));
        EtcdStore.Builder builder = EtcdStore.builder().timeout(timeout)
                .sessionTtl(Duration.ofSeconds(address.longParameter("session_ttl_s",
                        EtcdStore.DEFAULT_SESSION_TTL.toSeconds())));
        address.endpoints().forEach(builder::endpoint);
        if (!address.path().isEmpty()) {
            builder.prefix(address.path());
        }
        return builder.connect();
    }
}
