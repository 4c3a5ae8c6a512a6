package dev.ferry.rpc.internal.agent;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class AgentTimerTest {
    /** Deadlines of the "calls" the sweep expires, as PendingCalls does. */
    private final ConcurrentSkipListSet<Long> deadlines = new ConcurrentSkipListSet<>();
    private final List<Long> expired = new CopyOnWriteArrayList<>();
    private final AtomicInteger sweeps = new AtomicInteger();
    private final AgentTimer timer = new AgentTimer(runnable -> new Thread(runnable, "agent-timer-test"), now -> {
        sweeps.incrementAndGet();
        while (!deadlines.isEmpty() && deadlines.first() <= now) {
            expired.add(deadlines.pollFirst());
        }
        return deadlines.isEmpty() ? Long.MAX_VALUE : deadlines.first();
    });

    @AfterEach
    void close() {
        timer.close();
    }

    private long arm(long delayMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
        deadlines.add(deadline);
        timer.armed(deadline);
        return deadline;
    }

    private void awaitExpired(int count) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (expired.size() < count && System.nanoTime() < until) {
            Thread.onSpinWait();
            Thread.yield();
        }
        assertThat(expired).hasSizeGreaterThanOrEqualTo(count);
    }

    @Test
    void aDeadlineIsMetAndNotBefore() throws Exception {
        long deadline = arm(20);
        awaitExpired(1);
        assertThat(expired).containsExactly(deadline);
        // The sweep that expired it ran at or after the deadline (it only expires what is due).
    }

    @Test
    void anEarlierDeadlineArmedLaterWakesTheSleepingTimer() throws Exception {
        long late = arm(60_000);
        long early = arm(10);
        awaitExpired(1);
        assertThat(expired).containsExactly(early);
        assertThat(deadlines).containsExactly(late);
    }

    @Test
    void manyCallsWithTheSameTimeoutCostNoSweepsUntilTheFirstIsDue() throws Exception {
        CountDownLatch first = new CountDownLatch(1);
        timer.schedule(first::countDown, 0);
        assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
        int before = sweeps.get();
        for (int i = 0; i < 10_000; i++) {
            arm(60_000);
        }
        // One wake at most for the first of them (the timer slept with nothing to do); the others
        // come later than the earliest deadline it knows.
        assertThat(sweeps.get() - before).isLessThanOrEqualTo(2);
        assertThat(expired).isEmpty();
    }

    @Test
    void tasksRunInDeadlineOrderOnTheTimerThread() throws Exception {
        // Deadlines 150 ms apart, scheduled latest first: whatever the order of scheduling, they run
        // in deadline order, provided scheduling took under 150 ms (else the deadlines themselves
        // may be in another order, so that attempt proves nothing and the next one runs).
        for (int attempt = 0; attempt < 3; attempt++) {
            List<String> ran = new CopyOnWriteArrayList<>();
            CountDownLatch done = new CountDownLatch(3);
            long start = System.nanoTime();
            timer.schedule(() -> {
                ran.add("c:" + Thread.currentThread().getName());
                done.countDown();
            }, TimeUnit.MILLISECONDS.toNanos(300));
            timer.schedule(() -> {
                ran.add("a");
                done.countDown();
            }, 0);
            timer.schedule(() -> {
                ran.add("b");
                done.countDown();
            }, TimeUnit.MILLISECONDS.toNanos(150));
            long scheduling = System.nanoTime() - start;
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            if (scheduling < TimeUnit.MILLISECONDS.toNanos(150)) {
                assertThat(ran).containsExactly("a", "b", "c:agent-timer-test");
                return;
            }
        }
        throw new AssertionError("scheduling three tasks took over 150 ms in every attempt");
    }

    @Test
    void aFailingTaskDoesNotStopTheTimer() throws Exception {
        CountDownLatch after = new CountDownLatch(1);
        timer.schedule(() -> {
            throw new IllegalStateException("boom");
        }, 0);
        timer.schedule(after::countDown, TimeUnit.MILLISECONDS.toNanos(5));
        assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
    }
}
