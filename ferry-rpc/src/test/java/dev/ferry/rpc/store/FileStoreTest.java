package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** FileStore behaviour beyond the store contract: other processes, foreign locks, damaged files. */
@Timeout(60)
class FileStoreTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void storesInSeparateJvmsShareOneFile() throws Exception {
        Path file = dir.resolve("shared");
        int addsPerProcess = 200;
        try (FileStore store = FileStore.open(file, LONG)) {
            List<Process> children = new ArrayList<>();
            for (String name : List.of("child-a", "child-b")) {
                children.add(startChild(file, name, addsPerProcess));
            }
            for (int i = 0; i < addsPerProcess; i++) {
                store.add("counter", 1);
            }
            store.waitFor(List.of("done/child-a", "done/child-b"));
            assertThat(store.add("counter", 0)).isEqualTo(3L * addsPerProcess);

            store.set("go", "now".getBytes(UTF_8));
            store.waitFor(List.of("ack/child-a", "ack/child-b"));
            assertThat(store.get("ack/child-a")).isEqualTo("now".getBytes(UTF_8));
            for (Process child : children) {
                assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child exits").isTrue();
                assertThat(child.exitValue()).as("child exit code; see " + dir).isZero();
            }
        }
    }

    private Process startChild(Path file, String name, int adds) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                FileStoreWorkerMain.class.getName(), file.toString(), name, Integer.toString(adds))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile())
                .start();
    }

    @Test
    void openedForNWorkersTheFileIsDeletedWhenTheLastOfThemCloses() {
        Path file = dir.resolve("job");
        FileStore first = FileStore.open(file, LONG, 3);
        FileStore second = FileStore.open(file, LONG, 3);
        FileStore third = FileStore.open(file, LONG, 3);
        first.set("k", new byte[] {1});

        first.close();
        first.close(); // idempotent: counts once
        first.withTimeout(Duration.ofSeconds(1)).close(); // a view of a closed store does not count again
        second.close();
        assertThat(file).exists();
        assertThat(third.get("k")).containsExactly(1); // still usable by the worker that has not closed
        third.close();
        assertThat(file).doesNotExist();

        // the next job on the same path starts empty
        try (FileStore next = FileStore.open(file, LONG, 1)) {
            assertThat(next.check(java.util.List.of("k"))).isFalse();
        }
        assertThat(file).doesNotExist();
        assertThatThrownBy(() -> FileStore.open(file, LONG, 0)).isInstanceOf(RpcException.class)
                .hasMessageContaining("numWorkers must be at least 1");
    }

    @Test
    void dataOutlivesTheStoreThatWroteIt() {
        Path file = dir.resolve("persist");
        try (FileStore store = FileStore.open(file, LONG)) {
            store.set("kept", new byte[] {1});
            store.set("deleted", new byte[] {2});
            store.deleteKey("deleted");
            store.add("n", 3);
        }
        try (FileStore reopened = FileStore.open(file, LONG)) {
            assertThat(reopened.get("kept")).containsExactly(1);
            assertThat(reopened.check(List.of("deleted"))).isFalse();
            assertThat(new String(reopened.get("n"), US_ASCII)).isEqualTo("3");
            assertThat(reopened.numKeys()).isEqualTo(2);
        }
    }

    @Test
    void aLockHeldOutsideTheStoresIsWaitedForNotFatal() throws Exception {
        Path file = dir.resolve("locked");
        try (FileStore store = FileStore.open(file, LONG);
             FileChannel foreign = FileChannel.open(file, StandardOpenOption.WRITE)) {
            store.set("before", new byte[] {1});
            FileLock lock = foreign.lock(); // same JVM, another channel: tryLock throws Overlapping...

            assertThatThrownBy(() -> store.withTimeout(Duration.ofMillis(100)).check(List.of("before")))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(Code.TIMEOUT);
                        assertThat(e.getMessage()).contains("lock").contains(file.toString());
                    });

            // A wait for keys that cannot even read the file is still a wait that names its keys.
            StoreTimeoutException timeout = catchThrowableOfType(StoreTimeoutException.class,
                    () -> store.get("absent", Duration.ofMillis(100)));
            assertThat(timeout.missingKeys()).containsExactly("absent");
            assertThat(timeout.getCause()).hasMessageContaining("lock");

            Background<Boolean> setter = Background.start("setter", () -> {
                store.set("after", new byte[] {2});
                return true;
            }).awaitBlocked();
            lock.release();
            assertThat(setter.join()).isTrue();
            assertThat(store.get("after")).containsExactly(2);
        }
    }

    @Test
    void anInterruptedCallerDoesNotBreakTheStore() throws Exception {
        // An interrupt reaching a thread in FileChannel I/O closes the channel for everyone; the
        // store must keep callers' interrupts away from the channel.
        Path file = dir.resolve("interrupts");
        try (FileStore store = FileStore.open(file, LONG);
             FileChannel foreign = FileChannel.open(file, StandardOpenOption.WRITE)) {
            store.set("before", new byte[] {1});
            FileLock lock = foreign.lock();
            Background<Boolean> setter = Background.start("setter", () -> {
                store.set("during", new byte[] {2}); // stuck behind the foreign lock
                return true;
            }).awaitBlocked();

            setter.interrupt();
            assertThatThrownBy(setter::join)
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(Code.INTERNAL);
                        assertThat(e.getMessage()).contains("Interrupted");
                    });
            lock.release();

            // The started set still lands, and the store is intact for everyone else.
            assertThat(store.get("during")).containsExactly(2);
            store.set("after", new byte[] {3});
            assertThat(store.get("after")).containsExactly(3);

            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> store.set("while-interrupted", new byte[0]))
                        .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.INTERNAL));
            } finally {
                assertThat(Thread.interrupted()).as("interrupt status kept").isTrue();
            }
            assertThat(store.check(List.of("while-interrupted"))).isFalse();
            assertThat(store.get("before")).containsExactly(1);
        }
    }

    @Test
    void aFileThatIsNotAStoreIsRejectedNamingIt() throws IOException {
        Path file = dir.resolve("not-a-store");
        Files.writeString(file, "hello, I am a text file\n");
        try (FileStore store = FileStore.open(file, LONG)) {
            assertThatThrownBy(() -> store.set("k", new byte[0]))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(Code.PROTOCOL_ERROR);
                        assertThat(e.getMessage()).contains(file.toString()).contains("header");
                    });
        }
    }

    @Test
    void aRecordCutShortByACrashIsReported() throws IOException {
        Path file = dir.resolve("torn");
        try (FileStore store = FileStore.open(file, LONG)) {
            store.set("whole", new byte[] {1, 2, 3});
        }
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 2));
        try (FileStore store = FileStore.open(file, LONG)) {
            assertThatThrownBy(() -> store.get("whole"))
                    .isInstanceOfSatisfying(RpcException.class, e -> {
                        assertThat(e.code()).isEqualTo(Code.PROTOCOL_ERROR);
                        assertThat(e.getMessage()).contains("middle of a record").contains("offset 8");
                    });
        }
    }

    @Test
    void aMissingDirectoryIsAnInvalidArgument() {
        Path file = dir.resolve("no-such-dir").resolve("store");
        assertThatThrownBy(() -> FileStore.open(file, LONG))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains(file.toString());
                });
    }
}
