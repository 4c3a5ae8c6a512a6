package dev.ferry.cli.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.ferry.cli.testworkers.Chatty;
import dev.ferry.cli.testworkers.EnvEcho;
import dev.ferry.cli.testworkers.FailAndFollow;
import dev.ferry.cli.testworkers.FailOnRank;
import dev.ferry.cli.testworkers.FinishThenFail;
import dev.ferry.cli.testworkers.Sleeper;
import dev.ferry.cli.testworkers.StdinEcho;
import dev.ferry.cli.testworkers.ThrowEveryAttempt;
import dev.ferry.cli.testworkers.ThrowTogether;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Starts real worker JVMs; every test ends with no worker process left alive. */
@Timeout(60)
class WorkerGroupTest {

  private static final Duration BOUND = Duration.ofSeconds(30);

  private final CollectingSink sink = new CollectingSink();
  private final List<WorkerGroup> groups = new ArrayList<>();

  private WorkerGroup start(WorkerGroupSpec spec) throws IOException {
    WorkerGroup group = new WorkerGroup(spec);
    groups.add(group);
    return group.start();
  }

  @AfterEach
  void noOrphans() {
    for (WorkerGroup group : groups) {
      List<Process> processes = group.processes();
      group.close();
      for (Process p : processes) {
        assertThat(ProcessHandle.of(p.pid()).map(ProcessHandle::isAlive).orElse(false))
            .as("worker pid %d is still alive", p.pid()).isFalse();
      }
    }
  }

  @Test
  void everyRankStartsWithTheRendezvousEnvironment() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(EnvEcho.class, 3, "a", "b c")
        .addJvmArg("-Dferry.test.prop=from-jvm-arg")
        .putEnv("FERRY_TEST_EXTRA", "extra")
        .sink(sink)
        .build());

    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.SUCCEEDED);
    assertThat(result.failure()).isEmpty();
    assertThat(group.masterPort()).isBetween(1, 65535);
    String groupToken = sink.lines(0, WorkerStream.STDOUT).stream().filter(l -> l.startsWith("auth=")).findFirst()
        .orElseThrow();
    assertThat(groupToken).as("a token of its own for the group").isNotEqualTo("auth=none");
    for (int rank = 0; rank < 3; rank++) {
      assertThat(result.workers().get(rank).rank()).isEqualTo(rank);
      assertThat(result.workers().get(rank).exitCode()).isZero();
      assertThat(result.workers().get(rank).pid()).isEqualTo(group.process(rank).pid());
      assertThat(sink.lines(rank, WorkerStream.STDOUT)).containsExactly(
          "RANK=" + rank,
          "LOCAL_RANK=" + rank,
          "WORLD_SIZE=3",
          "LOCAL_WORLD_SIZE=3",
          "MASTER_ADDR=127.0.0.1",
          "MASTER_PORT=" + group.masterPort(),
          "FERRY_TEST_EXTRA=extra",
          "GROUP_RANK=0",
          "TORCHELASTIC_RESTART_COUNT=null",
          "FERRY_STATUS_URL=null",
          groupToken,
          "prop=from-jvm-arg",
          "leakDetection=disabled",
          "args=[a, b c]");
      assertThat(sink.lines(rank, WorkerStream.STDERR)).containsExactly("stderr of rank " + rank);
    }
  }

  @Test
  void aWorkersOwnJvmArgOverridesTheWorkerFlags() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(EnvEcho.class, 1)
        .addJvmArg("-Dio.netty.leakDetection.level=paranoid")
        .sink(sink)
        .build());

    assertThat(group.awaitCompletion(BOUND).outcome()).isEqualTo(GroupResult.Outcome.SUCCEEDED);
    assertThat(sink.lines(0, WorkerStream.STDOUT)).contains("leakDetection=paranoid");
  }

  @Test
  void eachGroupGetsATokenOfItsOwnUnlessOneIsGiven() throws Exception {
    CollectingSink second = new CollectingSink();
    CollectingSink given = new CollectingSink();
    WorkerGroup one = start(TestWorkers.spec(EnvEcho.class, 1).sink(sink).build());
    WorkerGroup two = start(TestWorkers.spec(EnvEcho.class, 1).sink(second).build());
    String token = WorkerEnvironment.newAuthToken();
    WorkerGroup three = start(TestWorkers.spec(EnvEcho.class, 1)
        .putEnv(WorkerEnvironment.FERRY_AUTH_TOKEN, token).sink(given).build());
    for (WorkerGroup group : List.of(one, two, three)) {
      assertThat(group.awaitCompletion(BOUND).succeeded()).isTrue();
    }

    assertThat(authLine(sink)).isNotEqualTo(authLine(second)).isNotEqualTo("auth=none");
    assertThat(authLine(given)).isEqualTo("auth=" + token.length() + "/" + Integer.toHexString(token.hashCode()));
  }

  private static String authLine(CollectingSink lines) {
    return lines.lines(0, WorkerStream.STDOUT).stream().filter(l -> l.startsWith("auth=")).findFirst().orElseThrow();
  }

  @Test
  void forwardsEveryLineWholeAndInOrder() throws Exception {
    int lines = 3000;
    WorkerGroup group = start(TestWorkers.spec(Chatty.class, 2, Integer.toString(lines)).sink(sink).build());

    assertThat(group.awaitCompletion(BOUND).succeeded()).isTrue();

    String padding = "x".repeat(100);
    for (int rank = 0; rank < 2; rank++) {
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < lines; i++) {
        expected.add("rank " + rank + " line " + i + " " + padding);
      }
      expected.add("rank " + rank + " done"); // unterminated last line
      assertThat(sink.lines(rank, WorkerStream.STDOUT)).containsExactlyElementsOf(expected);
    }
  }

  @Test
  void aFailingRankStopsTheOthersAndIsReported() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(FailOnRank.class, 3, "1", "3").sink(sink).build());

    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.FAILED);
    WorkerResult failure = result.failure().orElseThrow();
    assertThat(failure.rank()).isEqualTo(1);
    assertThat(failure.exitCode()).isEqualTo(3);
    assertThat(failure.stoppedByLauncher()).isFalse();
    assertThat(result.workers().get(0).stoppedByLauncher()).isTrue();
    assertThat(result.workers().get(2).stoppedByLauncher()).isTrue();
    assertThat(result.headline()).isEqualTo("rank 1 (pid " + failure.pid() + ") failed with exit code 3 after "
        + Elapsed.format(failure.elapsed()) + "; stopped ranks 0, 2");
    assertThat(group.processes()).noneMatch(Process::isAlive);
    // SIGTERM is enough for a worker that does not resist, so no grace period is spent.
    assertThat(result.elapsed()).isLessThan(Duration.ofSeconds(15));
    assertThat(sink.lines(1, WorkerStream.STDERR)).contains("rank 1 failing on purpose");
  }

  @Test
  void ranksThatFailTogetherAreAllReportedWithTheirErrors(@TempDir Path markers) throws Exception {
    WorkerGroup group = start(TestWorkers.spec(ThrowTogether.class, 3, markers.toString(), "1", "2")
        .sink(sink).build());

    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.FAILED);
    WorkerResult first = result.failure().orElseThrow();
    assertThat(first.rank()).isEqualTo(1);
    assertThat(first.exitCode()).isEqualTo(1);
    // Rank 2 was signalled while already failing (its main had thrown; its hook still ran): it counts
    // as failed, whichever code the JVM then exits with (its own 1, or SIGTERM's 143: they race).
    assertThat(result.workers().get(2).exitCode()).isIn(1, 128 + 15);
    for (int rank : new int[] {1, 2}) {
      WorkerResult worker = result.workers().get(rank);
      assertThat(worker.failedOnItsOwn()).as(worker.describe()).isTrue();
      assertThat(worker.stoppedByLauncher()).as(worker.describe()).isFalse();
      assertThat(worker.error()).contains("java.lang.IllegalStateException: rank " + rank + " cannot go on");
      assertThat(result.summary()).contains(worker.describe());
      assertThat(worker.describe()).contains("exit code " + worker.exitCode())
          .endsWith(" after " + Elapsed.format(worker.elapsed())
          + ": java.lang.IllegalStateException: rank " + rank + " cannot go on");
    }
    WorkerResult sleeper = result.workers().get(0);
    assertThat(sleeper.stoppedByLauncher()).isTrue();
    assertThat(sleeper.exitCode()).isEqualTo(128 + 15);
    assertThat(sleeper.error()).isEmpty();
    assertThat(result.headline()).isEqualTo("ranks 1, 2 failed; the first to exit was rank " + first.rank()
        + " (pid " + first.pid() + "), with exit code 1 after " + Elapsed.format(first.elapsed())
        + "; stopped ranks 0");
  }

  @Test
  void aRankStartedAgainKeepsItsEarlierAttemptsInTheSummary(@TempDir Path attempts) throws Exception {
    WorkerGroup group = start(TestWorkers.spec(ThrowEveryAttempt.class, 2, attempts.toString(), "1")
        .workerRestarts(1).sink(sink).build());

    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.FAILED);
    WorkerResult last = result.workers().get(1);
    assertThat(last.error()).contains("java.lang.IllegalStateException: rank 1 attempt 2");
    assertThat(result.earlierAttempts(1)).singleElement().satisfies(first -> {
      assertThat(first.error()).contains("java.lang.IllegalStateException: rank 1 attempt 1");
      assertThat(first.pid()).isNotEqualTo(last.pid());
      assertThat(result.summary()).contains("  " + last.describe() + System.lineSeparator()
          + "    started again after: " + first.describe());
    });
    assertThat(result.earlierAttempts(0)).isEmpty();
  }

  @Test
  void aRankThatFailsWhenNoOtherRankRunsIsNotStartedIntoAnEndedWorld(@TempDir Path marks) throws Exception {
    WorkerGroup group = start(TestWorkers.spec(FinishThenFail.class, 2, marks.toString())
        .workerRestarts(2).sink(sink).build());

    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.FAILED);
    assertThat(result.failure().orElseThrow().rank()).isEqualTo(1);
    assertThat(result.failure().orElseThrow().exitCode()).isEqualTo(4);
    assertThat(group.restarts(1)).isZero();
    assertThat(result.earlierAttempts(1)).isEmpty();
    assertThat(sink.lines(1, WorkerStream.STDERR)).containsExactly("rank 1 failing after rank 0 finished");
  }

  @Test
  void aWorkerKilledFromOutsideIsReportedWithItsSignal() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(Sleeper.class, 2).sink(sink).build());
    sink.awaitLines("ready", 2, BOUND);

    group.process(1).destroyForcibly(); // as the kernel's out-of-memory killer would
    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.FAILED);
    WorkerResult killed = result.failure().orElseThrow();
    assertThat(killed.rank()).isEqualTo(1);
    assertThat(killed.exitCode()).isEqualTo(128 + 9);
    assertThat(result.headline()).startsWith("rank 1 (pid " + killed.pid() + ") failed with exit code 137"
        + " (SIGKILL from outside the launcher: the kernel's out-of-memory killer, or kill -9) after ");
    assertThat(result.workers().get(0).describe()).contains("exit code 143 (SIGTERM) after ")
        .endsWith("(stopped by the launcher)");
  }

  @Test
  void aRankThatFailsBecauseAnotherDidHasAMomentToSaySo(@TempDir Path marks) throws Exception {
    WorkerGroup group = start(TestWorkers.spec(FailAndFollow.class, 2, marks.toString()).sink(sink).build());

    GroupResult result = group.awaitCompletion(BOUND);

    assertThat(result.failure().orElseThrow().rank()).isZero();
    WorkerResult follower = result.workers().get(1);
    assertThat(follower.stoppedByLauncher()).as(follower.describe()).isFalse();
    assertThat(follower.exitCode()).isEqualTo(1);
    assertThat(follower.error()).contains("java.lang.IllegalStateException: rank 1 lost rank 0");
    assertThat(result.headline()).startsWith("ranks 0, 1 failed; the first to exit was rank 0");
  }

  @Test
  void aTimeoutStopsAHungGroup() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(Sleeper.class, 2).sink(sink).build());

    GroupResult result = group.awaitCompletion(Duration.ofSeconds(1));

    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.TIMED_OUT);
    assertThat(result.elapsed()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
    assertThat(result.workers()).allMatch(WorkerResult::stoppedByLauncher).noneMatch(WorkerResult::succeeded);
    assertThat(result.headline()).startsWith("timed out after ").endsWith("; stopped ranks 0, 1");
    assertThat(group.processes()).noneMatch(Process::isAlive);
    assertThat(group.awaitCompletion(Duration.ofSeconds(1))).isSameAs(result);
  }

  @Test
  void aCloseWhileAnotherIsUnderWayReturnsOnlyOnceTheGroupIsClosed(@TempDir Path dir) throws Exception {
    Path signalled = dir.resolve("sigterm");
    WorkerGroup group = start(TestWorkers.spec(Sleeper.class, 1, "--ignore-sigterm", signalled.toString())
        .terminationGrace(Duration.ofSeconds(1)).statusPort(0).sink(sink).build());
    sink.awaitLines("ready", 1, BOUND);
    int statusPort = group.statusPage().orElseThrow().getPort();
    Thread first = Thread.ofPlatform().daemon().start(group::close); // e.g. a failure notice from another node
    await().atMost(BOUND).until(() -> Files.exists(signalled)); // under way: it waits out the grace period

    group.close(); // e.g. the round's own thread, which then starts the next round on the same status port

    assertThat(group.process(0).isAlive()).isFalse();
    try (ServerSocket samePort = new ServerSocket(statusPort)) {
      assertThat(samePort.getLocalPort()).isEqualTo(statusPort);
    }
    first.join(BOUND);
  }

  @Test
  void aWorkerThatIgnoresSigtermIsKilledAfterTheGracePeriod() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(Sleeper.class, 1, "--ignore-sigterm")
        .terminationGrace(Duration.ofMillis(500)).sink(sink).build());
    sink.awaitLines("ready", 1, BOUND); // the shutdown hook that resists SIGTERM is installed

    group.close();

    assertThat(group.process(0).isAlive()).isFalse();
    GroupResult result = group.awaitCompletion(BOUND);
    assertThat(result.outcome()).isEqualTo(GroupResult.Outcome.TERMINATED);
    assertThat(result.workers().get(0).exitCode()).isEqualTo(128 + 9); // SIGKILL
  }

  @Test
  void closeStopsRunningWorkersAndIsIdempotent() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(Sleeper.class, 2).sink(sink).build());
    sink.awaitLines("ready", 2, BOUND);

    group.close();
    group.close();

    assertThat(group.processes()).noneMatch(Process::isAlive);
    assertThat(group.awaitCompletion(BOUND).outcome()).isEqualTo(GroupResult.Outcome.TERMINATED);
    assertThatThrownBy(group::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }

  @Test
  void anInterruptedWaitLeavesTheGroupRunningAndCanBeRepeated() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(Sleeper.class, 2).sink(sink).build());
    sink.awaitLines("ready", 2, BOUND);

    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> group.awaitCompletion(BOUND)).isInstanceOf(InterruptedException.class);

    assertThat(group.processes()).allMatch(Process::isAlive);
    assertThat(group.awaitCompletion(Duration.ofMillis(200)).outcome()).isEqualTo(GroupResult.Outcome.TIMED_OUT);
    assertThat(group.processes()).noneMatch(Process::isAlive);
  }

  @Test
  void pipedStreamsLetTheCallerTalkToEachWorker() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(StdinEcho.class, 2)
        .stdout(OutputMode.PIPE).pipeStdin(true).sink(sink).build());

    for (int rank = 0; rank < 2; rank++) {
      Process process = group.process(rank);
      OutputStream stdin = process.getOutputStream();
      stdin.write(("hello " + rank + "\n").getBytes(StandardCharsets.UTF_8));
      stdin.flush();
      BufferedReader stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      assertThat(stdout.readLine()).isEqualTo(rank + ":hello " + rank);
      stdin.close(); // end of input: the worker exits 0
    }

    assertThat(group.awaitCompletion(BOUND).succeeded()).isTrue();
    assertThat(sink.lines(0, WorkerStream.STDOUT)).isEmpty(); // piped, not forwarded
  }

  @Test
  void discardedStreamsAreNotForwarded() throws Exception {
    WorkerGroup group = start(TestWorkers.spec(EnvEcho.class, 1).stdout(OutputMode.DISCARD).sink(sink).build());

    assertThat(group.awaitCompletion(BOUND).succeeded()).isTrue();
    assertThat(sink.lines(0, WorkerStream.STDOUT)).isEmpty();
    assertThat(sink.lines(0, WorkerStream.STDERR)).containsExactly("stderr of rank 0");
  }

  @Test
  void stdinIsClosedUnlessPiped() throws Exception {
    // StdinEcho would block forever on an open stdin.
    WorkerGroup group = start(TestWorkers.spec(StdinEcho.class, 1).sink(sink).build());

    assertThat(group.awaitCompletion(BOUND).succeeded()).isTrue();
  }

  @Test
  void aWorkerThatCannotStartFailsStartCleanly() {
    WorkerGroup group = new WorkerGroup(TestWorkers.spec(EnvEcho.class, 2)
        .javaExecutable(Path.of("/nonexistent/bin/java")).build());

    assertThatThrownBy(group::start).isInstanceOf(IOException.class)
        .hasMessageContaining("cannot start worker rank 0 with /nonexistent/bin/java");
    assertThatThrownBy(() -> group.process(0)).isInstanceOf(IllegalStateException.class);
  }
}
