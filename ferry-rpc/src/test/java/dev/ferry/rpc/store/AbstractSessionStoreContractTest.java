package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The contract of stores with client sessions ({@link Store#hasSessions()}): everything {@link
 * AbstractStoreContractTest} checks, plus ephemeral keys that go away with the handle that set
 * them, whether it closes or its process is killed.
 */
public abstract class AbstractSessionStoreContractTest extends AbstractStoreContractTest {
    /** How long the holder process may take to start and set its key. */
    private static final Duration HOLDER_START = Duration.ofSeconds(60);

    /**
     * The init method URL of the namespace {@link #store} uses, such that a process opening it with
     * {@link Rendezvous} (rank 0, world size 1) sees the same keys, and its session expires within
     * {@link #sessionExpiry()} of its death.
     */
    protected abstract String initMethod();

    /** An upper bound on how long the service takes to expire a dead process's session. */
    protected abstract Duration sessionExpiry();

    /** Two round trips per add and retries under contention: 8 x 100 adds still race plenty. */
    @Override
    protected int concurrentAddsPerThread() {
        return 100;
    }

    @Test
    void storesWithSessionsSaySo() {
        assertThat(store.hasSessions()).isTrue();
        assertThat(new PrefixStore("p", store).hasSessions()).isTrue();
    }

    @Test
    void anEphemeralKeyGoesAwayWhenItsStoreCloses() throws Exception {
        Store other = track(secondHandle(store));
        other.setEphemeral("alive/1", "host-b".getBytes(UTF_8));
        other.set("kept", "persistent".getBytes(UTF_8));
        assertThat(store.get("alive/1")).isEqualTo("host-b".getBytes(UTF_8));

        other.close();

        awaitAbsent("alive/1", Duration.ofSeconds(10));
        assertThat(store.get("kept")).isEqualTo("persistent".getBytes(UTF_8));
    }

    @Test
    void setMakesAnEphemeralKeyPersistent() throws Exception {
        Store other = track(secondHandle(store));
        other.setEphemeral("k", "ephemeral".getBytes(UTF_8));
        other.set("k", "persistent".getBytes(UTF_8));
        other.setEphemeral("counter", "1".getBytes(UTF_8));
        assertThat(other.add("counter", 1)).isEqualTo(2);

        other.close();

        assertThat(store.get("k")).isEqualTo("persistent".getBytes(UTF_8));
        assertThat(store.add("counter", 0)).isEqualTo(2);
    }

    @Test
    void ephemeralKeysFailAfterClose() {
        store.close();
        assertThatThrownBy(() -> store.setEphemeral("k", new byte[1]))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.SHUTDOWN));
    }

    @Test
    void anEphemeralKeyOfAKilledProcessExpiresByItself() throws Exception {
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), EphemeralKeyHolderMain.class.getName(),
                initMethod(), "alive/9")
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), UTF_8));
            Background<String> ready = Background.start("holder-output", () -> {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.equals(EphemeralKeyHolderMain.READY)) {
                        return line;
                    }
                }
                return "exited with " + holder.waitFor();
            });
            // A JVM's start and its first session take seconds on a loaded machine, not the 10 s
            // bound of one store call.
            assertThat(ready.join(HOLDER_START)).isEqualTo(EphemeralKeyHolderMain.READY);
            assertThat(store.get("alive/9")).isEqualTo("holder".getBytes(UTF_8));

            holder.destroyForcibly(); // SIGKILL: no close, no revoke; only the session's expiry removes it
            assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();

            awaitAbsent("alive/9", sessionExpiry().plusSeconds(10));
        } finally {
            holder.destroyForcibly();
        }
    }

    /** Waits, bounded, for the service to delete {@code key}; checks every 20 ms. */
    private void awaitAbsent(String key, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (store.check(List.of(key))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(key + " still present " + bound + " later");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
