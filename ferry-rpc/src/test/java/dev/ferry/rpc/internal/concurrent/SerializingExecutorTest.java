package dev.ferry.rpc.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class SerializingExecutorTest {
    private final ExecutorService pool = Executors.newFixedThreadPool(8);

    @AfterEach
    void stopPool() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    /** Records overlap: if two tasks ever run at once, {@code maxActive} exceeds 1. */
    private static final class OverlapProbe {
        final AtomicInteger active = new AtomicInteger();
        final AtomicInteger maxActive = new AtomicInteger();

        void enter() {
            maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
        }

        void exit() {
            active.decrementAndGet();
        }
    }

    @Test
    void runsTasksOneAtATimeInSubmissionOrder() throws InterruptedException {
        SerializingExecutor executor = new SerializingExecutor(pool);
        OverlapProbe probe = new OverlapProbe();
        // Unsynchronized on purpose: the executor must order the tasks' memory effects itself.
        List<Integer> order = new ArrayList<>();
        int tasks = 10_000;
        CountDownLatch allRan = new CountDownLatch(tasks);
        for (int i = 0; i < tasks; i++) {
            int n = i;
            executor.execute(() -> {
                probe.enter();
                order.add(n);
                probe.exit();
                allRan.countDown();
            });
        }
        assertThat(allRan.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(probe.maxActive.get()).isEqualTo(1);
        assertThat(order).hasSize(tasks);  // the latch makes the tasks' writes visible here
        for (int i = 0; i < tasks; i++) {
            assertThat(order.get(i)).isEqualTo(i);
        }
    }

    @Test
    void keepsEachSubmittersOrderUnderConcurrentSubmission() throws InterruptedException {
        SerializingExecutor executor = new SerializingExecutor(pool);
        OverlapProbe probe = new OverlapProbe();
        int submitters = 6;
        int perSubmitter = 2_000;
        List<int[]> ran = new CopyOnWriteArrayList<>();
        CountDownLatch allRan = new CountDownLatch(submitters * perSubmitter);
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService producers = Executors.newFixedThreadPool(submitters);
        try {
            for (int s = 0; s < submitters; s++) {
                int submitter = s;
                producers.execute(() -> {
                    try {
                        start.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    for (int i = 0; i < perSubmitter; i++) {
                        int n = i;
                        executor.execute(() -> {
                            probe.enter();
                            ran.add(new int[] {submitter, n});
                            probe.exit();
                            allRan.countDown();
                        });
                    }
                });
            }
            start.countDown();
            assertThat(allRan.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            producers.shutdownNow();
        }
        assertThat(probe.maxActive.get()).isEqualTo(1);
        int[] next = new int[submitters];
        for (int[] task : ran) {
            assertThat(task[1]).as("task of submitter %d", task[0]).isEqualTo(next[task[0]]);
            next[task[0]]++;
        }
    }

    @Test
    void isNotReentrantOnADirectDelegate() {
        SerializingExecutor executor = new SerializingExecutor(Runnable::run);
        List<String> events = new ArrayList<>();
        executor.execute(() -> {
            events.add("outer start");
            executor.execute(() -> events.add("inner"));
            events.add("outer end");
        });
        executor.execute(() -> events.add("next"));
        assertThat(events).containsExactly("outer start", "outer end", "inner", "next");
    }

    @Test
    void taskSubmittedByATaskRunsAfterTasksSubmittedBeforeIt() throws InterruptedException {
        SerializingExecutor executor = new SerializingExecutor(pool);
        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        executor.execute(() -> {
            await(release);
            events.add("first");
            executor.execute(() -> {
                events.add("submitted by first");
                done.countDown();
            });
        });
        executor.execute(() -> events.add("second"));
        release.countDown();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(events).containsExactly("first", "second", "submitted by first");
    }

    @Test
    void throwingTaskDoesNotStopTheNextOnes() throws InterruptedException {
        SerializingExecutor executor = new SerializingExecutor(pool);
        CountDownLatch ran = new CountDownLatch(1);
        executor.execute(() -> {
            throw new IllegalStateException("task failed");
        });
        executor.execute(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void rejectedTaskIsWithdrawnAndTheExecutorStaysUsable() {
        AtomicBoolean reject = new AtomicBoolean(true);
        Executor flaky = task -> {
            if (reject.get()) {
                throw new RejectedExecutionException("pool shut down");
            }
            task.run();
        };
        SerializingExecutor executor = new SerializingExecutor(flaky);
        List<String> events = new ArrayList<>();
        assertThatThrownBy(() -> executor.execute(() -> events.add("rejected")))
                .isInstanceOf(RejectedExecutionException.class);

        reject.set(false);
        executor.execute(() -> events.add("accepted"));
        assertThat(events).containsExactly("accepted");
    }

    @Test
    void separateInstancesRunInParallelOnTheSamePool() throws InterruptedException {
        SerializingExecutor a = new SerializingExecutor(pool);
        SerializingExecutor b = new SerializingExecutor(pool);
        CountDownLatch aRunning = new CountDownLatch(1);
        CountDownLatch bRunning = new CountDownLatch(1);
        CountDownLatch bothSawEachOther = new CountDownLatch(2);
        a.execute(() -> {
            aRunning.countDown();
            if (await(bRunning)) {
                bothSawEachOther.countDown();
            }
        });
        b.execute(() -> {
            bRunning.countDown();
            if (await(aRunning)) {
                bothSawEachOther.countDown();
            }
        });
        assertThat(bothSawEachOther.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void rejectsNulls() {
        assertThatThrownBy(() -> new SerializingExecutor(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new SerializingExecutor(pool).execute(null)).isInstanceOf(NullPointerException.class);
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
