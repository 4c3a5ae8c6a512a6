package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.concurrent.ManagedBlocking;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

class WarmRequestThreadTest {
    private static final long SPIN = 200_000;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final Consumer<Runnable> schedule = task -> timer.schedule(task, 1, TimeUnit.MILLISECONDS);
    private final List<String> spilledOn = new CopyOnWriteArrayList<>();
    /** The thread's clock: stands still unless a test moves it. */
    private final AtomicLong now = new AtomicLong();
    /** The worker's request permits: one, the warm thread's. */
    private final RequestLimiter permit = new RequestLimiter(1);
    private WarmRequestThread warm;

    @AfterEach
    void close() {
        if (warm != null) {
            warm.close(true, 5_000);
        }
        timer.shutdownNow();
    }

    private static final long STALL = 1_000_000;

    private WarmRequestThread start(String name) {
        warm = new WarmRequestThread(name, SPIN,
                task -> Thread.ofVirtual().start(() -> {
                    spilledOn.add("virtual");
                    task.run();
                }), schedule, permit, () -> { }, new WarmRequestThread.Timing(now::get, STALL, 10 * STALL));
        return warm;
    }

    /** Makes the thread's running average small: short tasks may then wait in the backlog. */
    private static void warmUp(WarmRequestThread warm) throws InterruptedException {
        for (int i = 0; i < 8; i++) {
            CountDownLatch done = new CountDownLatch(1);
            while (!warm.offer(done::countDown)) {
                Thread.onSpinWait(); // busy with the previous one's end
            }
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void shortRequestsWaitBehindTheRunningOneAndRunOnTheWarmThreadInOrder() throws Exception {
        WarmRequestThread warm = start("warm-order");
        warmUp(warm);
        CountDownLatch release = runUntilReleased(warm);
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch bothDone = new CountDownLatch(2);
        assertThat(warm.offer(() -> {
            ran.add("a:" + Thread.currentThread().getName());
            bothDone.countDown();
        })).isTrue();
        assertThat(warm.offer(() -> {
            ran.add("b:" + Thread.currentThread().getName());
            bothDone.countDown();
        })).isTrue();
        assertThat(warm.waiting()).isEqualTo(2);
        release.countDown();
        assertThat(bothDone.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).containsExactly("a:warm-order", "b:warm-order");
        assertThat(spilledOn).isEmpty();
    }

    @Test
    void requestsThatWouldWaitLongGoElsewhere() throws Exception {
        WarmRequestThread warm = start("warm-full");
        // No short requests seen yet: the thread assumes each takes the stall limit, too long to queue.
        CountDownLatch release = runUntilReleased(warm);
        int accepted = 0;
        while (warm.offer(() -> { }) && accepted < 1_000) {
            accepted++;
        }
        assertThat(accepted).isLessThanOrEqualTo(10); // 10 × STALL of expected wait at most
        release.countDown();
    }

    @Test
    void aRequestBlockingOnAFerryFutureHandsTheBacklogToVirtualThreads() throws Exception {
        WarmRequestThread warm = start("warm-nested");
        warmUp(warm);
        CountDownLatch queuedRan = new CountDownLatch(1);
        CountDownLatch offered = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        // The handler waits for the request queued behind it, as a nested call back to this
        // worker would: without the hand-off that is a deadlock.
        assertThat(warm.offer(() -> {
            started.countDown();
            awaitQuietly(offered);
            ManagedBlocking.Permit permit = ManagedBlocking.beforeBlocking();
            try {
                awaitQuietly(queuedRan);
            } finally {
                ManagedBlocking.afterBlocking(permit);
            }
        })).isTrue();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(warm.offer(queuedRan::countDown)).isTrue();
        offered.countDown();
        assertThat(queuedRan.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(spilledOn).containsExactly("virtual");
    }

    @Test
    void theWatchdogMovesTheBacklogOnWhenTheRunningRequestBlocksOnAnythingElse() throws Exception {
        WarmRequestThread warm = start("warm-stalled");
        warmUp(warm);
        CountDownLatch queuedRan = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        assertThat(warm.offer(() -> {
            started.countDown();
            awaitQuietly(queuedRan); // a plain latch: no hook sees this block
        })).isTrue();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(warm.offer(queuedRan::countDown)).isTrue();
        // The watchdog runs every millisecond; it hands nothing on while the request is young.
        assertThat(queuedRan.await(50, TimeUnit.MILLISECONDS)).isFalse();
        now.addAndGet(STALL + 1);
        assertThat(queuedRan.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(spilledOn).containsExactly("virtual");
        assertThat(warm.waiting()).isZero();
    }

    @Test
    void aLongRunningRequestMakesNewOnesGoElsewhere() throws Exception {
        WarmRequestThread warm = start("warm-long");
        CountDownLatch release = runUntilReleased(warm);
        awaitBlocked(warm);
        now.addAndGet(STALL + 1);
        assertThat(warm.offer(() -> { })).isFalse();
        release.countDown();
    }

    @Test
    void aRunnableRequestPastTheStallTimeKeepsItsBacklogUntilItRunsLong() throws Exception {
        WarmRequestThread warm = start("warm-runnable");
        warmUp(warm);
        AtomicBoolean release = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(1);
        assertThat(warm.offer(() -> {
            started.countDown();
            while (!release.get()) {
                Thread.onSpinWait(); // runnable all along, like a preempted or computing handler
            }
        })).isTrue();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        try {
            now.addAndGet(STALL + 1);
            CountDownLatch queuedRan = new CountDownLatch(1);
            assertThat(warm.offer(queuedRan::countDown)).isTrue(); // queued, not spilled
            assertThat(warm.waiting()).isEqualTo(1);
            now.addAndGet(WarmRequestThread.LONG_RUN_FACTOR * STALL);
            assertThat(warm.offer(() -> { })).isFalse(); // now it counts as stalled
            assertThat(queuedRan.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(spilledOn).containsExactly("virtual");
        } finally {
            release.set(true);
        }
    }

    @Test
    void oneRequestThatLostItsCpuForLongBarelyMovesTheAverage() {
        long average = 4_000;
        long afterPreemption = WarmRequestThread.nextAverage(average, 3_000_000); // a 3 ms scheduler slice
        assertThat(afterPreemption).isLessThan(2 * average);
        assertThat(WarmRequestThread.nextAverage(average, 4_800)).isEqualTo(4_100); // an eighth of the way
        assertThat(WarmRequestThread.nextAverage(0, 1_000_000)).isEqualTo(1_000); // from 0, at least 1 µs counts
    }

    @Test
    void requestsThatReallyTakeLongerRaiseTheAverageWithinAFewRequests() {
        long average = 3_000;
        for (int i = 0; i < 8; i++) {
            average = WarmRequestThread.nextAverage(average, 3_000_000);
        }
        assertThat(average).isGreaterThan(300_000);
    }

    @Test
    void theThreadLearnsItsAverageFromTheRequestsItRuns() throws Exception {
        WarmRequestThread warm = start("warm-average");
        assertThat(warm.averageNanos()).isEqualTo(STALL); // nothing proved short yet
        warmUp(warm); // requests that take no time on the test clock
        assertThat(warm.averageNanos()).isLessThan(STALL / 2);
    }

    @Test
    void backlogsMayWaitLongerOnOneOrTwoProcessors() {
        assertThat(WarmRequestThread.maxQueueWaitNanos(1)).isEqualTo(300_000);
        assertThat(WarmRequestThread.maxQueueWaitNanos(2)).isEqualTo(300_000);
        assertThat(WarmRequestThread.maxQueueWaitNanos(4)).isEqualTo(100_000);
    }

    @Test
    void itHoldsItsPermitWhileAwakeAndGivesItBackWhileParked() throws Exception {
        WarmRequestThread warm = start("warm-permit");
        awaitPermitsRunning(0); // parked: a worker of one permit may run a request elsewhere
        CountDownLatch release = runUntilReleased(warm);
        assertThat(permit.running()).isEqualTo(1);
        assertThat(warm.idleWithPermit()).isFalse();
        release.countDown();
        awaitPermitsRunning(0); // parked again after its spin
    }

    /** Waits (10 s at most) until {@code n} permits are taken. */
    private void awaitPermitsRunning(int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (permit.running() != n) {
            assertThat(System.nanoTime()).as("permits taken: %d", n).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    /** Waits (10 s at most) until the running request has blocked its thread. */
    private static void awaitBlocked(WarmRequestThread warm) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (warm.threadState() == Thread.State.RUNNABLE) {
            assertThat(System.nanoTime()).as("the running request blocks").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    @Test
    void closingHandsTheBacklogOnAndRefusesNewRequests() throws Exception {
        WarmRequestThread warm = start("warm-close");
        warmUp(warm);
        CountDownLatch release = runUntilReleased(warm);
        CountDownLatch queuedRan = new CountDownLatch(1);
        assertThat(warm.offer(queuedRan::countDown)).isTrue();
        warm.stopTaking();
        assertThat(warm.offer(() -> { })).isFalse();
        assertThat(queuedRan.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(spilledOn).containsExactly("virtual");
        release.countDown();
    }

    /** Hands the thread a request that runs until the returned latch is counted down; returns once it runs. */
    private static CountDownLatch runUntilReleased(WarmRequestThread warm) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        assertThat(warm.offer(() -> {
            started.countDown();
            awaitQuietly(release);
        })).isTrue();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        return release;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
