package dev.ferry.rpc.store;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every {@link Store} must have, run against each implementation by a subclass (as
 * grpc's {@code AbstractTransportTest} is run against each transport).
 */
@Timeout(30)
public abstract class AbstractStoreContractTest {
    /** Long enough never to expire in a passing test; waits that should end are released sooner. */
    protected static final Duration LONG = Duration.ofSeconds(60);
    protected static final Duration SHORT = Duration.ofMillis(100);

    private final List<AutoCloseable> cleanup = new ArrayList<>();
    protected Store store;

    /** A fresh, empty store with default timeout {@code timeout}. */
    protected abstract Store createStore(Duration timeout) throws Exception;

    /**
     * A second, independent handle on the same data as {@code store} (another client, another open
     * of the same file), so tests can check that changes made through one are seen by the other.
     */
    protected abstract Store secondHandle(Store store) throws Exception;

    /**
     * How many atomic adds each of 8 threads makes in {@code concurrentAddsAreAtomic}: 1000 by
     * default; a store on an external service, where an add is two round trips and contended adds
     * retry, may ask for fewer so the test stays within its time.
     */
    protected int concurrentAddsPerThread() {
        return 1000;
    }

    /** Releases whatever the subclass created beyond the stores (servers, directories). */
    protected void tearDownBackend() throws Exception {
    }

    @BeforeEach
    void createFixture() throws Exception {
        store = track(createStore(LONG));
    }

    @AfterEach
    void closeFixture() throws Exception {
        for (AutoCloseable closeable : cleanup.reversed()) {
            closeable.close();
        }
        tearDownBackend();
    }

    protected <T extends AutoCloseable> T track(T closeable) {
        cleanup.add(closeable);
        return closeable;
    }

    private Store second() throws Exception {
        return track(secondHandle(store));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    @Test
    void setThenGetReturnsTheValue() {
        store.set("k", bytes("v1"));
        assertThat(store.get("k")).isEqualTo(bytes("v1"));
        store.set("k", bytes("v2"));
        assertThat(store.get("k", SHORT)).isEqualTo(bytes("v2"));
    }

    @Test
    void valuesAreOpaqueBytes() {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        store.set("binary", all);
        store.set("empty", new byte[0]);
        store.set("ключ/ü", bytes("unicode key"));
        assertThat(store.get("binary")).isEqualTo(all);
        assertThat(store.get("empty")).isEmpty();
        assertThat(store.get("ключ/ü")).isEqualTo(bytes("unicode key"));
    }

    @Test
    void changesAreVisibleThroughAnotherHandle() throws Exception {
        Store other = second();
        store.set("from-first", bytes("1"));
        other.set("from-second", bytes("2"));
        assertThat(other.get("from-first")).isEqualTo(bytes("1"));
        assertThat(store.get("from-second")).isEqualTo(bytes("2"));
    }

    @Test
    void getBlocksUntilAnotherThreadSetsTheKey() throws Exception {
        Background<byte[]> getter = Background.start("getter", () -> store.get("late", LONG)).awaitBlocked();
        assertThat(getter.isDone()).isFalse();
        store.set("late", bytes("here"));
        assertThat(getter.join()).isEqualTo(bytes("here"));
    }

    @Test
    void getBlocksUntilAnotherHandleSetsTheKey() throws Exception {
        Store other = second();
        Background<byte[]> getter = Background.start("getter", () -> store.get("late", LONG)).awaitBlocked();
        other.set("late", bytes("from other"));
        assertThat(getter.join()).isEqualTo(bytes("from other"));
    }

    @Test
    void getTimesOutNamingTheMissingKey() {
        long start = System.nanoTime();
        StoreTimeoutException e = catchThrowableOfType(StoreTimeoutException.class,
                () -> store.get("never-set", SHORT));
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(e.code()).isEqualTo(Code.TIMEOUT);
        assertThat(e.missingKeys()).containsExactly("never-set");
        assertThat(e.getMessage()).contains("never-set");
        assertThat(elapsedMillis).isGreaterThanOrEqualTo(SHORT.toMillis() - 20).isLessThan(5_000);
    }

    @Test
    void defaultTimeoutComesFromTheStoreAndCanBeChangedOnAView() {
        assertThat(store.timeout()).isEqualTo(LONG);
        Store impatient = store.withTimeout(SHORT);
        assertThat(impatient.timeout()).isEqualTo(SHORT);
        assertThat(store.timeout()).isEqualTo(LONG);

        assertThatThrownBy(() -> impatient.get("absent")).isInstanceOf(StoreTimeoutException.class);
        assertThatThrownBy(() -> impatient.waitFor(List.of("absent"))).isInstanceOf(StoreTimeoutException.class);
        // Views share the store. The write goes through a view of the view with room to spare: a
        // TcpStore bounds each request's round trip by the timeout too, and 100 ms is not always
        // enough on a loaded machine (flakes.md).
        impatient.withTimeout(LONG).set("shared", bytes("x"));
        assertThat(store.get("shared")).isEqualTo(bytes("x"));
    }

    @Test
    void negativeTimeoutIsRejected() {
        assertThatThrownBy(() -> store.get("k", Duration.ofMillis(-1)))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT));
        assertThatThrownBy(() -> store.withTimeout(Duration.ofSeconds(-5)))
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT));
    }

    @Test
    void addCreatesTheCounterAtZeroAndStoresDecimalText() {
        assertThat(store.add("counter", 5)).isEqualTo(5);
        assertThat(store.add("counter", -7)).isEqualTo(-2);
        assertThat(store.add("counter", 0)).isEqualTo(-2);
        assertThat(new String(store.get("counter"), US_ASCII)).isEqualTo("-2");

        store.set("preset", "40".getBytes(US_ASCII));
        assertThat(store.add("preset", 2)).isEqualTo(42);
    }

    @Test
    void addToANonNumberIsAnInvalidArgument() {
        store.set("text", bytes("hello"));
        assertThatThrownBy(() -> store.add("text", 1))
                .isInstanceOfSatisfying(RpcException.class, e -> {
                    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).contains("text");
                });
        assertThat(store.get("text")).isEqualTo(bytes("hello"));
        store.set("still-usable", bytes("yes"));
        assertThat(store.get("still-usable")).isEqualTo(bytes("yes"));
    }

    @Test
    void concurrentAddsAreAtomic() throws Exception {
        Store other = second();
        int threads = 8;
        int addsPerThread = concurrentAddsPerThread();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Store handle = t % 2 == 0 ? store : other;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < addsPerThread; i++) {
                        handle.add("sum", 1);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(20, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(store.add("sum", 0)).isEqualTo((long) threads * addsPerThread);
        assertThat(new String(other.get("sum"), US_ASCII)).isEqualTo(Long.toString((long) threads * addsPerThread));
    }

    @Test
    void compareSetFollowsC10dSemantics() {
        // Absent key, empty expected: created.
        assertThat(store.compareSet("cas", new byte[0], bytes("first"))).isEqualTo(bytes("first"));
        assertThat(store.get("cas")).isEqualTo(bytes("first"));
        // Current equals expected: swapped.
        assertThat(store.compareSet("cas", bytes("first"), bytes("second"))).isEqualTo(bytes("second"));
        // Current differs: unchanged, current returned.
        assertThat(store.compareSet("cas", bytes("first"), bytes("third"))).isEqualTo(bytes("second"));
        assertThat(store.get("cas")).isEqualTo(bytes("second"));
        // Absent key, non-empty expected: nothing stored, expected returned (c10d).
        assertThat(store.compareSet("absent", bytes("exp"), bytes("des"))).isEqualTo(bytes("exp"));
        assertThat(store.check(List.of("absent"))).isFalse();
    }

    @Test
    void waitForReturnsOnceAllKeysExist() throws Exception {
        store.set("a", bytes("1"));
        Background<Boolean> waiter = Background.start("waiter", () -> {
            store.waitFor(List.of("a", "b", "c"), LONG);
            return true;
        }).awaitBlocked();
        store.set("b", bytes("2"));
        store.set("c", bytes("3"));
        assertThat(waiter.join()).isTrue();
        store.waitFor(List.of());
    }

    @Test
    void waitForTimeoutNamesOnlyTheMissingKeys() {
        store.set("rank/0", bytes("up"));
        store.set("rank/2", bytes("up"));
        StoreTimeoutException e = catchThrowableOfType(StoreTimeoutException.class,
                () -> store.waitFor(List.of("rank/0", "rank/1", "rank/2", "rank/3"), SHORT));
        assertThat(e.code()).isEqualTo(Code.TIMEOUT);
        assertThat(e.missingKeys()).containsExactly("rank/1", "rank/3");
        assertThat(e.getMessage()).contains("rank/1", "rank/3").doesNotContain("rank/0");
    }

    @Test
    void checkNeverBlocks() {
        assertThat(store.check(List.of())).isTrue();
        assertThat(store.check(List.of("x"))).isFalse();
        store.set("x", bytes("1"));
        assertThat(store.check(List.of("x"))).isTrue();
        assertThat(store.check(List.of("x", "y"))).isFalse();
    }

    @Test
    void deleteKeyReportsWhetherTheKeyExisted() {
        store.set("gone", bytes("soon"));
        assertThat(store.deleteKey("gone")).isTrue();
        assertThat(store.deleteKey("gone")).isFalse();
        assertThat(store.check(List.of("gone"))).isFalse();
        assertThatThrownBy(() -> store.get("gone", SHORT)).isInstanceOf(StoreTimeoutException.class);
        store.set("gone", bytes("back"));
        assertThat(store.get("gone")).isEqualTo(bytes("back"));
    }

    @Test
    void numKeysCountsLiveKeys() {
        assertThat(store.numKeys()).isZero();
        store.set("one", bytes("1"));
        store.add("two", 2);
        store.set("one", bytes("again"));
        assertThat(store.numKeys()).isEqualTo(2);
        store.deleteKey("one");
        assertThat(store.numKeys()).isEqualTo(1);
    }

    @Test
    void closeWakesBlockedCallsWithShutdown() throws Exception {
        Background<byte[]> getter = Background.start("getter", () -> store.get("never", Duration.ZERO));
        Background<Boolean> waiter = Background.start("waiter", () -> {
            store.waitFor(List.of("never"), Duration.ZERO);
            return true;
        });
        getter.awaitBlocked();
        waiter.awaitBlocked();

        store.close();

        assertThatThrownBy(getter::join)
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.SHUTDOWN));
        assertThatThrownBy(waiter::join)
                .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.SHUTDOWN));
    }

    @Test
    void everyOperationFailsWithShutdownAfterClose() {
        store.set("k", bytes("v"));
        store.close();
        store.close(); // idempotent

        List<Runnable> operations = List.of(
                () -> store.set("k", bytes("v")),
                () -> store.get("k"),
                () -> store.get("k", SHORT),
                () -> store.add("c", 1),
                () -> store.compareSet("k", bytes("v"), bytes("w")),
                () -> store.waitFor(List.of("k")),
                () -> store.check(List.of("k")),
                () -> store.deleteKey("k"),
                store::numKeys);
        for (Runnable operation : operations) {
            assertThatThrownBy(operation::run)
                    .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(Code.SHUTDOWN));
        }
    }
}
