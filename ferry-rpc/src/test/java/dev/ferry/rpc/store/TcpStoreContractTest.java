package dev.ferry.rpc.store;

import java.time.Duration;

/** The store contract against a {@link TcpStore} client of a {@link TcpStoreServer} on 127.0.0.1. */
class TcpStoreContractTest extends AbstractStoreContractTest {
    private TcpStoreServer server;

    @Override
    protected Store createStore(Duration timeout) {
        server = TcpStoreServer.start("127.0.0.1", 0);
        return TcpStore.connect("127.0.0.1", server.port(), timeout);
    }

    @Override
    protected Store secondHandle(Store store) {
        return TcpStore.connect("127.0.0.1", server.port(), store.timeout());
    }

    @Override
    protected void tearDownBackend() {
        server.close();
    }
}
