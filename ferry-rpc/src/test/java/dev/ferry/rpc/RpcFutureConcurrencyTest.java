package dev.ferry.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Many threads completing, waiting on and adding callbacks to the same futures. */
@Timeout(60)
class RpcFutureConcurrencyTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ExecutorService pool = Executors.newFixedThreadPool(16);

    @AfterEach
    void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * Registrations racing completion: every callback runs exactly once, and the callbacks of each
     * registering thread run in that thread's registration order.
     */
    @Test
    void callbacksRacingCompletionRunOnceInOrder() throws Exception {
        int registrars = 8;
        int perRegistrar = 200;
        for (int round = 0; round < 50; round++) {
            RpcFuture<Integer> future = new RpcFuture<>();
            ConcurrentLinkedQueue<int[]> ran = new ConcurrentLinkedQueue<>();
            CountDownLatch allRan = new CountDownLatch(registrars * perRegistrar);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> tasks = new ArrayList<>();
            for (int r = 0; r < registrars; r++) {
                int registrar = r;
                tasks.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < perRegistrar; i++) {
                        int n = i;
                        if (n % 2 == 0) {
                            future.addDoneCallback(f -> {
                                ran.add(new int[] {registrar, n});
                                allRan.countDown();
                            });
                        } else {
                            future.then(f -> {
                                ran.add(new int[] {registrar, n});
                                allRan.countDown();
                                return f.value();
                            });
                        }
                    }
                    return null;
                }));
            }
            tasks.add(pool.submit(() -> {
                start.await(10, TimeUnit.SECONDS);
                future.setResult(1);
                return null;
            }));
            start.countDown();
            for (Future<?> task : tasks) {
                task.get(10, TimeUnit.SECONDS);
            }
            assertThat(allRan.await(10, TimeUnit.SECONDS)).isTrue();

            assertThat(ran).hasSize(registrars * perRegistrar);
            int[] next = new int[registrars];
            for (int[] callback : ran) {
                assertThat(callback[1]).as("round %d, registrar %d", round, callback[0]).isEqualTo(next[callback[0]]);
                next[callback[0]]++;
            }
        }
    }

    @Test
    void manyWaitersAllSeeTheValue() throws Exception {
        RpcFuture<String> future = new RpcFuture<>();
        List<Future<String>> waiters = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            waiters.add(pool.submit(() -> future.await(WAIT)));
        }
        pool.execute(() -> future.setResult("v"));
        for (Future<String> waiter : waiters) {
            assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo("v");
        }
    }

    @Test
    void collectAllOverManyFuturesCompletedConcurrently() {
        int count = 5_000;
        List<RpcFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            futures.add(new RpcFuture<>());
        }
        for (int i = 0; i < count; i++) {
            int n = i;
            pool.execute(() -> futures.get(n).setResult(n));
        }
        List<Integer> values = RpcFuture.waitAll(futures, WAIT);
        for (int i = 0; i < count; i++) {
            assertThat(values.get(i)).isEqualTo(i);
        }
    }

    @Test
    void chainedCallbacksEachRunOnceAcrossThreads() throws Exception {
        ConcurrentHashMap<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        List<RpcFuture<Integer>> roots = new ArrayList<>();
        List<RpcFuture<Integer>> leaves = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            RpcFuture<Integer> root = new RpcFuture<>();
            int id = i;
            RpcFuture<Integer> leaf = root;
            for (int step = 0; step < 10; step++) {
                leaf = leaf.then(f -> {
                    runs.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                    return f.value() + 1;
                });
            }
            roots.add(root);
            leaves.add(leaf);
        }
        for (int i = 0; i < roots.size(); i++) {
            RpcFuture<Integer> root = roots.get(i);
            int value = i;
            pool.execute(() -> root.setResult(value));
        }
        List<Integer> values = RpcFuture.waitAll(leaves, WAIT);
        for (int i = 0; i < values.size(); i++) {
            assertThat(values.get(i)).isEqualTo(i + 10);
            assertThat(runs.get(i).get()).isEqualTo(10);
        }
    }
}
