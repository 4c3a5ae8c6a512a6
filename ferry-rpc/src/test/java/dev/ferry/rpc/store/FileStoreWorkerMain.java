package dev.ferry.rpc.store;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Child-process body for {@link FileStoreTest}: joins a FileStore from a separate JVM, adds to a
 * shared counter, announces itself, and waits for the parent's go key.
 *
 * <p>Arguments: store file, worker name, number of adds.
 */
public final class FileStoreWorkerMain {
    private FileStoreWorkerMain() {
    }

    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        String name = args[1];
        int adds = Integer.parseInt(args[2]);
        try (FileStore store = FileStore.open(file, Duration.ofSeconds(30))) {
            for (int i = 0; i < adds; i++) {
                store.add("counter", 1);
            }
            store.set("done/" + name, name.getBytes(StandardCharsets.UTF_8));
            store.waitFor(List.of("go"));
            store.set("ack/" + name, store.get("go"));
        }
    }
}
