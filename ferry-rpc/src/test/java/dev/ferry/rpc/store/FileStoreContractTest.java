package dev.ferry.rpc.store;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;

/** The store contract against a {@link FileStore} in a temporary directory. */
class FileStoreContractTest extends AbstractStoreContractTest {
    @TempDir
    Path dir;

    @Override
    protected Store createStore(Duration timeout) {
        return FileStore.open(dir.resolve("store"), timeout);
    }

    @Override
    protected Store secondHandle(Store store) {
        return FileStore.open(((FileStore) store).path(), store.timeout());
    }
}
