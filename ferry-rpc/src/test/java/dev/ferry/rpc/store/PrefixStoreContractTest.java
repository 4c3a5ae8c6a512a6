package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The store contract against a {@link PrefixStore} over a TcpStore, plus the prefixing itself. */
class PrefixStoreContractTest extends AbstractStoreContractTest {
    private TcpStoreServer server;
    private TcpStore base;

    @Override
    protected Store createStore(Duration timeout) {
        server = TcpStoreServer.start("127.0.0.1", 0);
        base = TcpStore.connect("127.0.0.1", server.port(), timeout);
        return new PrefixStore("rpc_prefix_0", base);
    }

    @Override
    protected Store secondHandle(Store store) {
        return new PrefixStore("rpc_prefix_0", TcpStore.connect("127.0.0.1", server.port(), store.timeout()));
    }

    @Override
    protected void tearDownBackend() {
        server.close();
    }

    @Test
    void keysAreStoredUnderPrefixSlashKey() {
        store.set("names/0", "worker0".getBytes(UTF_8));
        assertThat(base.get("rpc_prefix_0/names/0")).isEqualTo("worker0".getBytes(UTF_8));
        assertThat(base.check(List.of("names/0"))).isFalse();
    }

    @Test
    void prefixStoresNest() {
        Store names = new PrefixStore("names", store);
        names.add("count", 3);
        assertThat(base.add("rpc_prefix_0/names/count", 0)).isEqualTo(3);
        assertThat(((PrefixStore) store).prefix()).isEqualTo("rpc_prefix_0");
    }

    @Test
    void separatePrefixesDoNotSeeEachOther() {
        Store a = new PrefixStore("a", base);
        Store b = new PrefixStore("b", base);
        a.set("k", "from a".getBytes(UTF_8));
        assertThat(b.check(List.of("k"))).isFalse();
        b.set("k", "from b".getBytes(UTF_8));
        assertThat(a.get("k")).isEqualTo("from a".getBytes(UTF_8));
    }

    @Test
    void timeoutNamesKeysWithoutThePrefix() {
        Store names = new PrefixStore("names", store);
        names.set("0", new byte[] {1});
        StoreTimeoutException e = catchThrowableOfType(StoreTimeoutException.class,
                () -> names.waitFor(List.of("0", "1"), SHORT));
        assertThat(e.missingKeys()).containsExactly("1");
        // Each layer keeps the timeout it translated as its cause, down to the real key.
        StoreTimeoutException middle = (StoreTimeoutException) e.getCause();
        assertThat(middle.missingKeys()).containsExactly("names/1");
        assertThat(((StoreTimeoutException) middle.getCause()).missingKeys()).containsExactly("rpc_prefix_0/names/1");
    }
}
