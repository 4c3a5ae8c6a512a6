package dev.ferry.distributed.internal;

import dev.ferry.distributed.internal.ReleaseSender.Release;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ReleaseSender} on a scheduler the test runs by hand, to workers whose answers it gives. */
class ReleaseSenderTest {
    private final List<Runnable> due = new ArrayList<>();
    private final List<Long> delaysMillis = new ArrayList<>();
    private final Set<Integer> members = new HashSet<>(Set.of(1, 2));
    private final List<List<Long>> sent = new ArrayList<>();
    private final List<RpcFuture<Boolean>> answers = new ArrayList<>();

    private final ReleaseSender sender = new ReleaseSender(new ReleaseSender.Peers() {
        @Override
        public boolean reachable(int worker) {
            return members.contains(worker);
        }

        @Override
        public String name(int worker) {
            return "worker" + worker;
        }

        @Override
        public RpcFuture<?> send(int worker, List<Release> releases) {
            List<Long> ids = new ArrayList<>();
            releases.forEach(release -> ids.add(release.context().id()));
            sent.add(ids);
            RpcFuture<Boolean> answer = new RpcFuture<>();
            answers.add(answer);
            return answer;
        }
    }, (task, nanos) -> {
        due.add(task);
        delaysMillis.add(nanos / 1_000_000);
    });

    private static Release release(long id) {
        return new Release(new ContextKey(id, 7), 0);
    }

    private void runDue() {
        List<Runnable> now = new ArrayList<>(due);
        due.clear();
        now.forEach(Runnable::run);
    }

    private void fail(RpcException.Code code) {
        answers.getLast().setException(new RpcException(code, "lost"));
    }

    @Test
    void releasesWaitingForOneWorkerTravelTogetherOncePerContext() {
        sender.send(1, release(10));
        sender.send(1, release(11));
        sender.send(1, release(10)); // the same context again
        assertThat(due).as("one send scheduled, at once").hasSize(1);
        assertThat(delaysMillis).containsExactly(0L);
        runDue();
        assertThat(sent).containsExactly(List.of(10L, 11L));
        assertThat(sender.waiting()).isEqualTo(2);

        sender.send(1, release(12)); // while the message is on its way: with the next one
        assertThat(due).isEmpty();
        answers.getLast().setResult(true);
        runDue();
        assertThat(sent.getLast()).containsExactly(12L);
        answers.getLast().setResult(true);
        assertThat(sender.waiting()).isZero();
        assertThat(due).isEmpty();
    }

    @Test
    void aMessageThatDoesNotGetThroughIsSentAgainEverLongerAfterUpToFiveSeconds() {
        sender.send(2, release(20));
        runDue();
        for (int i = 0; i < 10; i++) {
            fail(i % 2 == 0 ? RpcException.Code.UNAVAILABLE : RpcException.Code.TIMEOUT);
            runDue();
        }
        assertThat(delaysMillis).containsExactly(0L, 50L, 100L, 200L, 400L, 800L, 1_600L, 3_200L, 5_000L, 5_000L, 5_000L);
        assertThat(sent).hasSize(11).allSatisfy(ids -> assertThat(ids).containsExactly(20L));
        answers.getLast().setResult(true);
        assertThat(sender.waiting()).isZero();

        sender.send(2, release(21)); // a success starts the waits over
        runDue();
        fail(RpcException.Code.UNAVAILABLE);
        assertThat(delaysMillis.getLast()).isEqualTo(50L);
    }

    @Test
    void aWorkerThatIsNoLongerAMemberOrIsForgottenGetsNothingMore() {
        sender.send(1, release(30));
        runDue();
        fail(RpcException.Code.UNAVAILABLE);
        members.remove(1); // left
        runDue();
        assertThat(sent).hasSize(1);
        assertThat(sender.waiting()).isZero();

        sender.send(2, release(31));
        runDue();
        sender.forget(2); // lost: its answer comes in vain
        fail(RpcException.Code.UNAVAILABLE);
        assertThat(due).isEmpty();
        assertThat(sender.waiting()).isZero();
    }

    @Test
    void aRefusedMessageIsNotSentAgainButTheReleasesBehindItAre() {
        sender.send(1, release(40));
        runDue();
        sender.send(1, release(41));
        fail(RpcException.Code.REMOTE_ERROR);
        runDue();
        assertThat(sent).containsExactly(List.of(40L), List.of(41L));
        answers.getLast().setResult(true);
        assertThat(sender.waiting()).isZero();
    }

    @Test
    void oneMessageCarriesAtMostABatch() {
        for (long id = 0; id < ReleaseSender.BATCH + 5; id++) {
            sender.send(1, release(id));
        }
        runDue();
        assertThat(sent.getLast()).hasSize(ReleaseSender.BATCH);
        answers.getLast().setResult(true);
        runDue();
        assertThat(sent.getLast()).hasSize(5);
    }
}
