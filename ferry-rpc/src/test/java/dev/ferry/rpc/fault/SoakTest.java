package dev.ferry.rpc.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A soak with faults: mixed calls ({@code rpcAsync}, {@code rpcSync}, {@code remote} then
 * {@code toHere}, small and large arguments) from worker0 (this JVM) to three workers in JVMs of
 * their own, 64 in flight, while worker2 is stopped (SIGSTOP) for a while and resumed and worker3 is
 * killed ({@code kill -9}) midway. Every call completes or fails with a clear code (a call to the
 * killed worker {@code UNAVAILABLE}, any other call succeeds: none is lost, none times out), the
 * survivors keep working, the caller's pending calls drain, every survivor's RRef counters are 0
 * soon after the last call (owners' tables, users' pending confirmations and children, the RRef
 * protocol's messages in flight), and the threads and heap of the caller and the surviving workers
 * come back to their level. The counts are printed.
 *
 * <p>The suite runs {@value #SUITE_CALLS} calls (about half a minute with the JVMs' start); the
 * full soak, 20,000, is {@code ./ferry soak} (or {@code -Dferry.soak.calls=N} on {@code -Dtest=SoakTest}).
 */
@Timeout(300)
class SoakTest {
    private static final int SUITE_CALLS = 2_000;
    private static final int WINDOW = 64;
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    /** Shorter than the heartbeat bound: the stopped worker is slow, not lost. */
    private static final Duration STOPPED = Duration.ofMillis(1_500);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
    private static final int LARGE = 2 << 20;
    private static final long MIB = 1 << 20;
    /**
     * How soon after the last call every survivor's RRef counters are 0: shorter than the RRef
     * protocol's retries of one message (50 + 100 + 200 + 400 + 800 ms), so a delete sent again and
     * again to the killed owner, as if it might come back, fails the test.
     */
    private static final Duration DRAINED = Duration.ofMillis(1_000);

    /** A worker's threads and heap after a collection (called remotely on each survivor). */
    static long[] health() {
        System.gc();
        return new long[] {ManagementFactory.getThreadMXBean().getThreadCount(),
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()};
    }

    @Test
    void everyCallCompletesOrFailsClearlyThroughAKillAndAStopAndEverythingDrains() throws Exception {
        int calls = Integer.getInteger("ferry.soak.calls", SUITE_CALLS);
        try (RemoteWorld world = RemoteWorld.start(4, List.of(1, 2, 3), HEARTBEAT)) {
            RpcAgent driver = world.agent(0);
            byte[] large = new byte[LARGE];
            // warm up each route once, then take the levels
            for (String worker : List.of("worker1", "worker2", "worker3")) {
                assertThat(driver.rpcSync(worker, Ops::identity, large)).isEqualTo(large);
                try (RRef<Object> rref = driver.remote(worker, Ops::identity, 1)) {
                    assertThat(rref.toHere()).isEqualTo(1);
                }
            }
            Map<String, long[]> before = new TreeMap<>();
            for (String worker : List.of("worker1", "worker2")) {
                before.put(worker, driver.rpcSync(worker, SoakTest::health));
                driver.rpcSync(worker, SoakTest::rrefCounters); // its first call, not timed by DRAINED
            }
            before.put("worker0", health());

            Outcomes outcomes = new Outcomes();
            AtomicBoolean killed = new AtomicBoolean();
            ScheduledExecutorService faults = Executors.newSingleThreadScheduledExecutor();
            List<CompletableFuture<?>> all = new ArrayList<>();
            Semaphore window = new Semaphore(WINDOW);
            long start = System.nanoTime();
            try {
                for (int i = 0; i < calls; i++) {
                    if (i == calls / 3) {
                        world.stop(2);
                        faults.schedule(() -> {
                            world.resume(2);
                            return null;
                        }, STOPPED.toMillis(), TimeUnit.MILLISECONDS);
                    }
                    if (i == calls / 2) {
                        world.kill(3);
                        killed.set(true);
                    }
                    String target = "worker" + (1 + i % 3);
                    boolean afterKill = killed.get();
                    window.acquire();
                    Kind kind = kindOf(i);
                    CompletableFuture<Object> call = start(driver, i, target, large);
                    all.add(call.handle((value, error) -> {
                        window.release();
                        outcomes.record(target, afterKill, kind, error);
                        return null;
                    }));
                }
                CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            } finally {
                faults.shutdownNow();
            }
            long ended = System.nanoTime();
            long millis = TimeUnit.NANOSECONDS.toMillis(ended - start);
            System.out.printf("SoakTest: %d calls in %d ms (%s): %s%n", calls, millis,
                    "worker2 stopped " + STOPPED.toMillis() + " ms at call " + calls / 3 + ", worker3 killed at call "
                            + calls / 2, outcomes);

            outcomes.assertClear();
            // Every survivor's RRef bookkeeping drains: no RRef left on the owners, nothing pending on
            // the users, no control message in flight (the deletes to the killed owner included).
            Map<String, Map<String, String>> counters = new TreeMap<>();
            await().atMost(DRAINED).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
                counters.put("worker0", rrefCounters(driver));
                for (String worker : List.of("worker1", "worker2")) {
                    counters.put(worker, driver.rpcSync(worker, SoakTest::rrefCounters));
                }
                counters.forEach((worker, rrefs) -> assertThat(rrefs).as("%s's RRef counters", worker)
                        .containsEntry("rref.num_owner_rrefs", "0").containsEntry("rref.num_forks", "0")
                        .containsEntry("rref.num_live_users", "0").containsEntry("rref.num_pending_users", "0")
                        .containsEntry("rref.num_pending_children", "0").containsEntry("rref.num_pending_futures", "0"));
            });
            System.out.printf("SoakTest: every survivor's RRef counters were 0 %d ms after the last call ended%n",
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended));
            // the survivors keep working
            assertThat(driver.rpcSync("worker1", Ops::add, 1, 2)).isEqualTo(3);
            assertThat(driver.rpcSync("worker2", Ops::add, 2, 2)).isEqualTo(4);
            // nothing left pending
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    "0".equals(driver.getDebugInfo().get("agent.client_active_calls")));
            // threads and heap back to their level, here and on the survivors
            Map<String, long[]> after = new TreeMap<>();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                after.put("worker0", health());
                for (String worker : List.of("worker1", "worker2")) {
                    after.put(worker, driver.rpcSync(worker, SoakTest::health));
                }
                for (String worker : before.keySet()) {
                    assertThat(after.get(worker)[0]).as("%s's threads", worker).isLessThanOrEqualTo(before.get(worker)[0] + 8);
                    assertThat(after.get(worker)[1]).as("%s's heap", worker)
                            .isLessThanOrEqualTo(before.get(worker)[1] + 64 * MIB);
                }
            });
            StringBuilder levels = new StringBuilder();
            for (String worker : before.keySet()) {
                levels.append(String.format(" %s %d -> %d threads, heap %.1f -> %.1f MiB;", worker, before.get(worker)[0],
                        after.get(worker)[0], before.get(worker)[1] / (double) MIB, after.get(worker)[1] / (double) MIB));
            }
            System.out.println("SoakTest: levels before and after:" + levels);
        }
    }

    /** The RRef counters of the worker running this ({@code rref.*} of its debug info). */
    static TreeMap<String, String> rrefCounters() {
        return rrefCounters(dev.ferry.rpc.Rpc.current());
    }

    private static TreeMap<String, String> rrefCounters(RpcAgent agent) {
        TreeMap<String, String> counters = new TreeMap<>(agent.getDebugInfo());
        counters.keySet().removeIf(key -> !key.startsWith("rref."));
        return counters;
    }

    private enum Kind { ASYNC_SMALL, ASYNC_LARGE, SYNC_SMALL, SYNC_LARGE, REMOTE_TO_HERE }

    private static Kind kindOf(int i) {
        return switch (i % 10) {
            case 0, 1, 2, 3 -> Kind.ASYNC_SMALL;
            case 4 -> Kind.ASYNC_LARGE;
            case 5, 6 -> Kind.SYNC_SMALL;
            case 7 -> Kind.SYNC_LARGE;
            default -> Kind.REMOTE_TO_HERE;
        };
    }

    /** Starts call {@code i}; blocking kinds run on a virtual thread of their own. */
    private static CompletableFuture<Object> start(RpcAgent driver, int i, String target, byte[] large) {
        return switch (kindOf(i)) {
            case ASYNC_SMALL -> driver.to(target).withTimeout(CALL_TIMEOUT).rpcAsync(Ops::add, i, 1)
                    .toCompletableFuture().thenApply(v -> (Object) v);
            case ASYNC_LARGE -> driver.to(target).withTimeout(CALL_TIMEOUT).rpcAsync(Ops::identity, (Object) large)
                    .toCompletableFuture();
            case SYNC_SMALL -> blocking(() -> driver.to(target).withTimeout(CALL_TIMEOUT).rpcSync(Ops::add, i, 2));
            case SYNC_LARGE -> blocking(() -> driver.to(target).withTimeout(CALL_TIMEOUT)
                    .rpcSync(Ops::identity, (Object) large));
            case REMOTE_TO_HERE -> blocking(() -> {
                try (RRef<Object> rref = driver.to(target).withTimeout(CALL_TIMEOUT).remote(Ops::identity, i)) {
                    return rref.toHere(CALL_TIMEOUT);
                }
            });
        };
    }

    private static CompletableFuture<Object> blocking(Supplier<Object> call) {
        CompletableFuture<Object> done = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                done.complete(call.get());
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    /** How each call ended, by target, kind and code. Thread-safe. */
    private static final class Outcomes {
        private final Map<String, Long> counts = new TreeMap<>();
        private final List<Throwable> unclear = new ArrayList<>();

        synchronized void record(String target, boolean afterKill, Kind kind, Throwable error) {
            Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                    ? error.getCause() : error;
            String outcome = cause == null ? "ok" : cause instanceof RpcException e ? e.code().name() : cause.toString();
            counts.merge(target + (target.equals("worker3") ? afterKill ? " after the kill" : " before" : "") + " "
                    + outcome, 1L, Long::sum);
            // Only calls to the killed worker may fail, and then only as UNAVAILABLE, with a message.
            boolean clear = cause == null || target.equals("worker3") && cause instanceof RpcException e
                    && e.code() == RpcException.Code.UNAVAILABLE && e.getMessage() != null && e.getMessage().contains("worker3");
            if (!clear) {
                unclear.add(new AssertionError(kind + " to " + target + (afterKill ? " after the kill" : ""), cause));
            }
        }

        synchronized void assertClear() {
            assertThat(unclear).as("calls that failed otherwise than UNAVAILABLE from the killed worker").isEmpty();
        }

        @Override
        public synchronized String toString() {
            return counts.toString();
        }
    }
}
