package dev.ferry.cli.launch;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferry.cli.testworkers.EnvEcho;
import dev.ferry.cli.testworkers.FailFirstAttempt;
import dev.ferry.cli.testworkers.FailOnRank;
import dev.ferry.cli.testworkers.Sleeper;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two launchers of one static job on this machine, each a real {@link MultiNodeRun} with real worker
 * JVMs: one world across both, a failure that stops both, and a restart of the whole world.
 */
@Timeout(120)
class MultiNodeRunTest {
  private static final AtomicInteger JOBS = new AtomicInteger();

  /** One node's launcher with its output captured. */
  private record Node(MultiNodeRun run, ByteArrayOutputStream out, ByteArrayOutputStream err) {
    String output() {
      return out.toString(UTF_8) + err.toString(UTF_8);
    }
  }

  private static final String TOKEN = "a-token-shared-by-the-test-nodes-0123456789";

  private static List<Node> nodes(int count, int maxRestarts, Class<?> main, String... args) {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    List<Node> nodes = new ArrayList<>();
    for (int rank = 0; rank < count; rank++) {
      nodes.add(node(endpoint, job, rank, count, maxRestarts, main, args));
    }
    return nodes;
  }

  private static Node node(String endpoint, String job, int rank, int count, int maxRestarts, Class<?> main,
      String... args) {
    return node(endpoint, job, rank, count, maxRestarts, TestWorkers.spec(main, 2, args).build());
  }

  private static Node node(String endpoint, String job, int rank, int count, int maxRestarts,
      WorkerGroupSpec workers) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    JobRendezvousSpec job0 = new JobRendezvousSpec(RendezvousBackend.STATIC, endpoint, job, count, count, rank,
        "127.0.0.1", TOKEN);
    return new Node(new MultiNodeRun(job0, workers, maxRestarts, null,
        new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8)), out, err);
  }

  /** Another node's {@code ferry run} in a JVM of its own (so that it can be killed), its output gathered. */
  private record Launcher(Process process, StringBuffer output) {
    static Launcher start(String endpoint, String job, int rank) throws Exception {
      return start(endpoint, job, rank, Sleeper.class);
    }

    static Launcher start(String endpoint, String job, int rank, Class<?> main, String... args) throws Exception {
      List<String> command = new ArrayList<>();
      command.add(JavaExecutable.current().toString());
      command.addAll(JvmFlags.defaults());
      command.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.ferry.cli.FerryCli", "run",
          "--no-aot-cache", "--nnodes", "2", "--nproc-per-node", "2", "--node-rank", Integer.toString(rank),
          "--rdzv-endpoint", endpoint, "--rdzv-id", job, "--local-addr", "127.0.0.1", "--grace-period", "3s",
          "--classpath", TestWorkers.classpath()));
      TestWorkers.FAST_JVM.forEach(option -> command.add("--jvm-arg=" + option));
      command.add(main.getName());
      command.addAll(List.of(args));
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
      builder.environment().put(WorkerEnvironment.FERRY_AUTH_TOKEN, TOKEN);
      Launcher launcher = new Launcher(builder.start(), new StringBuffer());
      Thread.ofPlatform().daemon().start(() -> {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(launcher.process().getInputStream(), UTF_8))) {
          for (String line; (line = lines.readLine()) != null; ) {
            launcher.output().append(line).append('\n');
          }
        } catch (java.io.IOException e) {
          launcher.output().append(e).append('\n');
        }
      });
      return launcher;
    }

    /** Kills the launcher with SIGKILL, which can neither stop its workers nor tell the other nodes; returns them. */
    List<ProcessHandle> kill() {
      List<ProcessHandle> orphans = process.descendants().toList();
      process.destroyForcibly();
      return orphans;
    }
  }

  /** Waits (bounded) until {@code text} shows {@code expected}. */
  private static void awaitOutput(java.util.function.Supplier<String> text, String expected) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!text.get().contains(expected)) {
      assertThat(System.nanoTime() - deadline).as("waiting for '%s' in:%n%s", expected, text.get()).isNegative();
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  private static CompletableFuture<Integer> callInBackground(Node node) {
    CompletableFuture<Integer> code = new CompletableFuture<>();
    Thread.ofPlatform().daemon().start(() -> code.complete(node.run().call()));
    return code;
  }

  private static List<Integer> runAll(List<Node> nodes) throws Exception {
    List<CompletableFuture<Integer>> codes = new ArrayList<>();
    for (Node node : nodes) {
      // a thread per node: the common pool may have a single thread on 2 cores, and the nodes wait for each other
      codes.add(callInBackground(node));
    }
    try {
      List<Integer> results = new ArrayList<>();
      for (CompletableFuture<Integer> code : codes) {
        results.add(code.get(100, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      // a test that failed or timed out must not leave worker JVMs behind
      nodes.parallelStream().forEach(node -> node.run().close());
    }
  }

  @Test
  void twoNodesRunOneWorldWithGlobalRanksAndNodePrefixes() throws Exception {
    List<Node> nodes = nodes(2, 0, EnvEcho.class);
    assertThat(runAll(nodes)).containsExactly(0, 0);
    String node0 = nodes.get(0).output();
    String node1 = nodes.get(1).output();
    assertThat(node0).contains("[node0/worker0] RANK=0", "[node0/worker1] RANK=1", "[node0/worker1] LOCAL_RANK=1",
        "[node0/worker0] WORLD_SIZE=4", "[node0/worker0] GROUP_RANK=0", "[node0/worker0] MASTER_ADDR=127.0.0.1");
    assertThat(node1).contains("[node1/worker2] RANK=2", "[node1/worker3] RANK=3", "[node1/worker2] LOCAL_RANK=0",
        "[node1/worker3] LOCAL_WORLD_SIZE=2", "[node1/worker3] GROUP_RANK=1", "[node1/worker2] stderr of rank 2");
    String masterPort = node0.lines().filter(l -> l.startsWith("[node0/worker0] MASTER_PORT=")).findFirst()
        .orElseThrow().substring("[node0/worker0] ".length());
    assertThat(node1).contains("[node1/worker2] " + masterPort);
    assertThat(node0).contains("ferry run: all 4 workers on 2 nodes exited with code 0");
    assertThat(node1).contains("ferry run: all 4 workers on 2 nodes exited with code 0");
  }

  @Test
  void aRestartedWorldKeepsItsStatusPageAtTheAddressPrintedFirst() throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    List<Node> nodes = new ArrayList<>();
    for (int rank = 0; rank < 2; rank++) {
      nodes.add(node(endpoint, job, rank, 2, 1,
          TestWorkers.spec(FailFirstAttempt.class, 2, "1", "5").statusPort(0).build()));
    }
    assertThat(runAll(nodes)).containsExactly(0, 0);
    for (Node node : nodes) {
      List<String> pages = node.output().lines().filter(l -> l.startsWith("ferry run: status page")).toList();
      assertThat(pages).as(node.output()).hasSize(2);
      assertThat(pages.get(1)).isEqualTo(pages.get(0));
    }
  }

  @Test
  void aLauncherWaitingForANodeSaysWhichOneAndTheNodeMayStillCome() throws Exception {
    startAloneSayingWhatItWaitsFor(0, (job, endpoint) -> "ferry run: waiting for node 1 of job " + job
        + " to arrive at " + endpoint + " (");
  }

  @Test
  void aLauncherWaitingForNodeZerosStoreSaysSoAndNodeZeroMayStillCome() throws Exception {
    startAloneSayingWhatItWaitsFor(1, (job, endpoint) -> "ferry run: waiting for node 0's launcher to serve job "
        + job + "'s store at " + endpoint + " (");
  }

  /** Node {@code early} of two starts alone and says what it waits for; the other then comes and both succeed. */
  private static void startAloneSayingWhatItWaitsFor(int early,
      java.util.function.BinaryOperator<String> notice) throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    Node first = node(endpoint, job, early, 2, 0, EnvEcho.class);
    Node second = node(endpoint, job, 1 - early, 2, 0, EnvEcho.class);
    CompletableFuture<Integer> firstCode = callInBackground(first);
    try {
      awaitOutput(first::output, notice.apply(job, endpoint));
      assertThat(first.output()).doesNotContain("RANK=");

      CompletableFuture<Integer> secondCode = callInBackground(second);
      assertThat(firstCode.get(60, TimeUnit.SECONDS)).as(first.output()).isZero();
      assertThat(secondCode.get(60, TimeUnit.SECONDS)).as(second.output()).isZero();
    } finally {
      first.run().close();
      second.run().close();
    }
  }

  @Test
  void theLaunchersOwnReportsNameEachWorkerAsItsOutputLinesDo() throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    Launcher node0 = Launcher.start(endpoint, job, 0, FailOnRank.class, "3", "7");
    Launcher node1 = Launcher.start(endpoint, job, 1, FailOnRank.class, "3", "7");
    try {
      assertThat(node0.process().waitFor(90, TimeUnit.SECONDS)).as(node0.output().toString()).isTrue();
      assertThat(node1.process().waitFor(30, TimeUnit.SECONDS)).as(node1.output().toString()).isTrue();
      assertThat(node1.process().exitValue()).isEqualTo(7);
      // node 1's local ranks 0 and 1 are the world's workers 2 and 3: its reports say so, as its output lines do
      String reports = node1.output().toString();
      assertThat(reports).containsPattern("node1/worker3 \\(pid \\d+\\) exited with code 7 after ")
          .contains("[node1/worker3] rank 3 failing on purpose", "stopping node1/worker2 (node1/worker3 failed)")
          .containsPattern("node1/worker2 \\(pid \\d+\\) stopped, exit code 143")
          .doesNotContainPattern("rank [01] \\(pid");
      assertThat(node0.output().toString()).contains("stopping node0/worker0, node0/worker1 (the worker group is closing)");
    } finally {
      node0.process().destroyForcibly();
      node1.process().destroyForcibly();
    }
  }

  @Test
  void aFailureElsewhereThatComesBeforeThisNodesWorkersStartEndsTheRoundWithoutStartingThem() throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    Node node0 = node(endpoint, job, 0, 2, 1, EnvEcho.class);
    // Node 1 is this test, speaking the launchers' protocol through the real store node 0 serves.
    CompletableFuture<NodeRendezvous> node1 = new CompletableFuture<>();
    CompletableFuture<NodeRendezvous.RoundPlan> round0 = new CompletableFuture<>();
    AtomicInteger rounds = new AtomicInteger();
    node0.run().beforeStart(round -> {
      if (rounds.getAndIncrement() == 0) { // round 0 only: its notice comes between node 0's watch and its workers' start
        NodeRendezvous.RoundPlan plan = round0.join();
        node1.join().failed(plan, 7, "node1/worker3 (pid 1) failed with exit code 7");
        await().atMost(Duration.ofSeconds(10)).until(round::stopped);
        node1.join().leave(plan, waiting -> { });
      }
    });
    CompletableFuture<Integer> code = callInBackground(node0);
    try {
      NodeRendezvous rendezvous = NodeRendezvous.open(new JobRendezvousSpec(RendezvousBackend.STATIC, endpoint, job,
          2, 2, 1, "127.0.0.1", TOKEN), waiting -> { });
      node1.complete(rendezvous);
      round0.complete(rendezvous.join(0, 2, waiting -> { }));
      NodeRendezvous.RoundPlan round1 = rendezvous.join(1, 2, waiting -> { });
      rendezvous.watch(round1, outcome -> { });
      assertThat(rendezvous.succeeded(round1).succeeded()).as(node0.output()).isTrue();
      rendezvous.leave(round1, waiting -> { });

      assertThat(code.get(60, TimeUnit.SECONDS)).as(node0.output()).isZero();
      String output = node0.output();
      assertThat(output).contains("ferry run: round 0 ended before node0's workers started; they are not started",
              "ferry run: node1/worker3 (pid 1) failed with exit code 7", "restarting the world (restart 1 of 1)",
              "[node0/worker0] RANK=0", "all 4 workers on 2 nodes exited with code 0")
          .doesNotContain("IllegalStateException");
      // round 0's workers never started: the only workers' lines (each writes one to stderr) are round 1's
      String reports = node0.err().toString(UTF_8);
      assertThat(reports.indexOf("[node0/worker")).as(reports).isGreaterThan(reports.indexOf("restarting the world"));
    } finally {
      node0.run().close();
      node1.thenAccept(NodeRendezvous::close);
    }
  }

  @Test
  void aLauncherStoppedBeforeItsWorkersStartTellsTheOtherNodesAndStartsNone() throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    Node node0 = node(endpoint, job, 0, 2, 1, EnvEcho.class);
    node0.run().beforeStart(round -> {
      Thread.ofPlatform().daemon().start(node0.run()::close); // Ctrl-C: close() waits for call() to end
      await().atMost(Duration.ofSeconds(10)).until(round::stopped);
    });
    CompletableFuture<Integer> code = callInBackground(node0);
    try (NodeRendezvous node1 = NodeRendezvous.open(new JobRendezvousSpec(RendezvousBackend.STATIC, endpoint, job,
        2, 2, 1, "127.0.0.1", TOKEN), waiting -> { })) {
      NodeRendezvous.RoundPlan plan = node1.join(0, 2, waiting -> { });
      CompletableFuture<NodeRendezvous.RoundOutcome> told = new CompletableFuture<>();
      node1.watch(plan, told::complete);
      assertThat(told.get(10, TimeUnit.SECONDS)).isEqualTo(
          new NodeRendezvous.RoundOutcome(false, MultiNodeRun.EXIT_TERMINATED, "node0 was stopped"));
      node1.leave(plan, waiting -> { });

      assertThat(code.get(30, TimeUnit.SECONDS)).as(node0.output()).isEqualTo(MultiNodeRun.EXIT_TERMINATED);
      assertThat(node0.output()).contains("ferry run: node0 was stopped")
          .doesNotContain("[node0/worker", "restarting the world", "IllegalStateException");
    } finally {
      node0.run().close();
    }
  }

  @Test
  void aWorkerFailingOnOneNodeStopsEveryNodeWithItsExitCode() throws Exception {
    List<Node> nodes = nodes(2, 0, FailOnRank.class, "3", "7");
    assertThat(runAll(nodes)).containsExactly(7, 7);
    assertThat(nodes.get(0).output()).contains("node1/worker3 (pid").contains("failed with exit code 7");
    assertThat(nodes.get(1).output()).contains("[node1/worker3] rank 3 failing on purpose");
  }

  @Test
  void maxRestartsRestartsTheWholeWorld() throws Exception {
    List<Node> nodes = nodes(2, 1, FailFirstAttempt.class, "1", "5");
    assertThat(runAll(nodes)).containsExactly(0, 0);
    assertThat(nodes.get(0).output()).contains("restarting the world (restart 1 of 1)",
        "[node0/worker0] attempt 1 rank 0 of 4", "[node0/worker1] attempt 1 rank 1 of 4");
    assertThat(nodes.get(1).output()).contains("[node1/worker2] attempt 1 rank 2 of 4",
        "[node1/worker3] attempt 1 rank 3 of 4", "ferry run: node 1 of 2, ranks 2..3 of 4 (restart 1 of 1)");
  }

  @Test
  void aLauncherKilledOnAnotherNodeStopsThisNodeOnceItIsNotHeardFrom() throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    Node node0 = node(endpoint, job, 0, 2, 0, Sleeper.class);
    CompletableFuture<Integer> code = callInBackground(node0);
    Launcher node1 = Launcher.start(endpoint, job, 1);
    List<ProcessHandle> orphans = List.of();
    try {
      awaitOutput(node0::output, "[node0/worker1] ready");
      awaitOutput(node1.output()::toString, "[node1/worker3] ready");
      awaitOutput(node1.output()::toString, "[node1/worker2] ready");
      long killed = System.nanoTime();
      orphans = node1.kill();

      // bounded: the silence, a beat, and stopping this node's workers (3 s grace)
      assertThat(code.get(NodeRendezvous.LAUNCHER_SILENCE.toSeconds() + 30, TimeUnit.SECONDS)).as(node0.output())
          .isEqualTo(1);
      // Its last beat may have come up to an interval before the kill, and the silence counts from that beat.
      assertThat(System.nanoTime() - killed).isGreaterThanOrEqualTo(
          NodeRendezvous.LAUNCHER_SILENCE.minus(NodeRendezvous.BEAT_INTERVAL).toNanos());
      assertThat(node0.output()).contains("ferry run: node1's launcher is gone (not heard from for "
          + Elapsed.format(NodeRendezvous.LAUNCHER_SILENCE) + " before its workers finished)");
    } finally {
      orphans.forEach(ProcessHandle::destroyForcibly);
      node1.process().destroyForcibly();
      node0.run().close();
    }
  }

  @Test
  void losingNodeZerosLauncherWhichServesTheStoreStopsTheOtherNodesAtOnceSayingSo() throws Exception {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    Launcher node0 = Launcher.start(endpoint, job, 0);
    Node node1 = node(endpoint, job, 1, 2, 1, Sleeper.class); // a restart cannot help: the store is gone
    CompletableFuture<Integer> code = callInBackground(node1);
    List<ProcessHandle> orphans = List.of();
    try {
      awaitOutput(node0.output()::toString, "[node0/worker1] ready");
      awaitOutput(node0.output()::toString, "[node0/worker0] ready");
      awaitOutput(node1::output, "[node1/worker3] ready");
      orphans = node0.kill();

      // its workers were stopped (3 s grace) well before anyone could have noticed a silence
      assertThat(code.get(NodeRendezvous.LAUNCHER_SILENCE.toSeconds(), TimeUnit.SECONDS)).as(node1.output())
          .isEqualTo(1);
      assertThat(node1.output()).contains("ferry run: lost the job's rendezvous store at " + endpoint
          + ", which node0's launcher served: it is gone").doesNotContain("\tat dev.ferry", "restarting the world");
    } finally {
      orphans.forEach(ProcessHandle::destroyForcibly);
      node0.process().destroyForcibly();
      node1.run().close();
    }
  }
}
