package dev.ferry.cli.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two launchers' rendezvous of one static job, meeting through the real TCP store that node 0
 * serves on loopback, with the beat and the silence shortened: how node 0 ends a job whose other
 * node is slow to leave, or gone.
 */
@Timeout(60)
class NodeRendezvousTest {
  private static final Duration BEAT = Duration.ofMillis(100);
  private static final Duration SILENCE = Duration.ofSeconds(1);
  private static final String TOKEN = "a-token-shared-by-the-test-nodes-0123456789";

  /** Both nodes after a round that succeeded: each has seen the outcome, neither has left. */
  private record Job(String id, NodeRendezvous node0, NodeRendezvous.RoundPlan plan0, NodeRendezvous node1,
                     NodeRendezvous.RoundPlan plan1) implements AutoCloseable {
    static Job afterASucceededRound() throws Exception {
      String endpoint = "127.0.0.1:" + FreePorts.pick();
      String id = "job-" + System.nanoTime();
      NodeRendezvous node0 = open(endpoint, id, 0);
      NodeRendezvous node1 = open(endpoint, id, 1);
      CompletableFuture<NodeRendezvous.RoundPlan> plan1 = inBackground(() -> node1.join(0, 1, waiting -> { }));
      NodeRendezvous.RoundPlan plan0 = node0.join(0, 1, waiting -> { });
      node0.watch(plan0, outcome -> { });
      node1.watch(plan1.get(10, TimeUnit.SECONDS), outcome -> { });
      CompletableFuture<NodeRendezvous.RoundOutcome> outcome1 = inBackground(() -> node1.succeeded(plan1.join()));
      assertThat(node0.succeeded(plan0).succeeded()).isTrue();
      assertThat(outcome1.get(10, TimeUnit.SECONDS).succeeded()).isTrue();
      return new Job(id, node0, plan0, node1, plan1.join());
    }

    private static NodeRendezvous open(String endpoint, String id, int rank) {
      return NodeRendezvous.open(new JobRendezvousSpec(RendezvousBackend.STATIC, endpoint, id, 2, 2, rank,
          "127.0.0.1", TOKEN), waiting -> { }, BEAT, SILENCE);
    }

    @Override
    public void close() {
      node1.close();
      node0.close();
    }
  }

  /** On a thread of its own: the nodes wait for each other, and the common pool may have one thread. */
  private static <T> CompletableFuture<T> inBackground(Supplier<T> task) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread.ofPlatform().daemon().start(() -> {
      try {
        result.complete(task.get());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  @Test
  void nodeZeroWaitsForANodeStillFinishingPastTheSilenceSaysForWhomAndEndsAsSoonAsItLeaves() throws Exception {
    try (Job job = Job.afterASucceededRound()) {
      List<String> notices = new CopyOnWriteArrayList<>();
      CompletableFuture<Boolean> leaving = inBackground(() -> {
        job.node0().leave(job.plan0(), notices::add);
        return true;
      });

      // node 1 is alive (it beats on) but not done, as while it stops its workers: node 0 waits, well past the silence
      String notice = "waiting for node 1 of job " + job.id() + " to finish before closing the job's store (";
      await().atMost(NodeRendezvous.FIRST_NOTICE.plusSeconds(5))
          .until(() -> notices.stream().anyMatch(n -> n.startsWith(notice)));
      assertThat(leaving).isNotDone();

      long left = System.nanoTime();
      job.node1().leave(job.plan1(), waiting -> { });
      assertThat(leaving.get(5, TimeUnit.SECONDS)).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - left)).isLessThan(Duration.ofSeconds(1));
    }
  }

  @Test
  void nodeZeroEndsOnceANodeWhoseLauncherDiedAfterTheOutcomeIsNotHeardFrom() throws Exception {
    try (Job job = Job.afterASucceededRound()) {
      job.node1().close(); // its launcher dies before it leaves: it beats no more
      long start = System.nanoTime();
      CompletableFuture<Boolean> leaving = inBackground(() -> {
        job.node0().leave(job.plan0(), waiting -> { });
        return true;
      });

      // not the fixed 30 s node 0 used to give a node it could no longer tell from a slow one
      assertThat(leaving.get(SILENCE.plusSeconds(5).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
      // its last beat may have come up to a beat before it died
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SILENCE.minus(BEAT.multipliedBy(2)));
    }
  }
}
