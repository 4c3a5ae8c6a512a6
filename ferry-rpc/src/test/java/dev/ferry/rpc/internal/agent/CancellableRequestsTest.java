package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.WorkerInfo;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The requests a cancel finds, and the cancels that come before their call ({@link EarlyCancels}),
 * on an injected clock. The scenarios over sockets are in {@code CancelOvertakesItsCallTest}.
 */
class CancellableRequestsTest {
    private static final WorkerInfo CALLER = new WorkerInfo("worker0", 0);
    private static final WorkerInfo OTHER = new WorkerInfo("worker1", 1);

    private final AtomicLong now = new AtomicLong(1_000);
    private final CancellableRequests<String> requests = new CancellableRequests<>(now::get);

    private static long key(WorkerInfo caller, long callId) {
        return CancellableRequests.key(caller.id(), callId);
    }

    @Test
    void aCancelFindsItsRequestUntilItIsAnswered() {
        assertThat(requests.add(key(CALLER, 1), CALLER, "one")).isTrue();
        assertThat(requests.cancelling(key(CALLER, 1), CALLER)).isEqualTo("one");
        requests.remove(key(CALLER, 1), "one");
        assertThat(requests.size()).isZero();
        assertThat(requests.earlyCancels()).as("nothing remembered for a call that was here").isZero();
    }

    @Test
    void aCancelThatComesFirstStopsItsCallOnceAndOnlyIt() {
        assertThat(requests.cancelling(key(CALLER, 7), CALLER)).isNull();
        assertThat(requests.earlyCancels()).isEqualTo(1);

        assertThat(requests.add(key(CALLER, 6), CALLER, "six")).as("an earlier call").isTrue();
        assertThat(requests.add(key(CALLER, 8), CALLER, "eight")).as("a later call").isTrue();
        assertThat(requests.add(key(OTHER, 7), OTHER, "another caller's #7")).isTrue();
        assertThat(requests.add(key(CALLER, 7), CALLER, "seven")).as("the cancelled call").isFalse();
        assertThat(requests.size()).as("it is not among the requests a cancel finds").isEqualTo(3);
        assertThat(requests.earlyCancels()).as("its tombstone went with it").isZero();
    }

    @Test
    void aTombstoneMatchesOnlyTheWorkerThatSentIt() {
        // Another worker under the same id (a departed worker's id taken by a new member).
        WorkerInfo sameId = new WorkerInfo("newcomer", CALLER.id());
        requests.cancelling(key(CALLER, 3), CALLER);
        assertThat(requests.add(key(sameId, 3), sameId, "the newcomer's #3")).isTrue();
        assertThat(requests.earlyCancels()).isZero();
    }

    @Test
    void aForgottenCallersTombstonesCancelNothingOfItsNextIncarnation() {
        requests.cancelling(key(CALLER, 1), CALLER);
        requests.cancelling(key(CALLER, 2), CALLER);
        requests.cancelling(key(OTHER, 2), OTHER);
        requests.forget(CALLER); // a restarted worker0: its call ids start over from 1

        assertThat(requests.earlyCancels()).isEqualTo(1);
        assertThat(requests.add(key(CALLER, 1), CALLER, "new #1")).isTrue();
        assertThat(requests.add(key(CALLER, 2), CALLER, "new #2")).isTrue();
        assertThat(requests.add(key(OTHER, 2), OTHER, "other's #2")).as("other callers' stay").isFalse();
    }

    @Test
    void tombstonesExpireAfterTheirAge() {
        requests.cancelling(key(CALLER, 1), CALLER); // answered already: nothing ever comes for it
        now.addAndGet(EarlyCancels.MAX_AGE_NANOS / 2);
        requests.cancelling(key(CALLER, 2), CALLER);
        assertThat(requests.earlyCancels()).isEqualTo(2);

        now.addAndGet(EarlyCancels.MAX_AGE_NANOS / 2);
        assertThat(requests.earlyCancels()).as("the first is a minute old").isEqualTo(1);
        assertThat(requests.add(key(CALLER, 1), CALLER, "late #1")).as("too late to be stopped").isTrue();
        assertThat(requests.add(key(CALLER, 2), CALLER, "#2")).isFalse();
        now.addAndGet(TimeUnit.HOURS.toNanos(1));
        assertThat(requests.earlyCancels()).isZero();
    }

    @Test
    void atCapacityTheOldestTombstoneGoesFirst() {
        for (long id = 1; id <= EarlyCancels.CAPACITY + 10; id++) {
            requests.cancelling(key(CALLER, id), CALLER);
            now.incrementAndGet();
        }
        assertThat(requests.earlyCancels()).isEqualTo(EarlyCancels.CAPACITY);
        assertThat(requests.add(key(CALLER, 10), CALLER, "#10")).as("evicted: it runs").isTrue();
        assertThat(requests.add(key(CALLER, 11), CALLER, "#11")).as("the oldest kept").isFalse();
        assertThat(requests.add(key(CALLER, EarlyCancels.CAPACITY + 10), CALLER, "the newest")).isFalse();
    }
}
