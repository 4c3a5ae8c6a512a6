package dev.ferry.cli.launch;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.testworkers.EnvEcho;
import dev.ferry.cli.testworkers.FailFirstAttempt;
import dev.ferry.cli.testworkers.FailOnRank;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
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

  private static List<Node> nodes(int count, int maxRestarts, Class<?> main, String... args) {
    String endpoint = "127.0.0.1:" + FreePorts.pick();
    String job = "job" + JOBS.incrementAndGet();
    List<Node> nodes = new ArrayList<>();
    for (int rank = 0; rank < count; rank++) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      JobRendezvousSpec job0 = new JobRendezvousSpec(RendezvousBackend.STATIC, endpoint, job, count, count, rank,
          "127.0.0.1", "a-token-shared-by-the-test-nodes-0123456789");
      WorkerGroupSpec workers = TestWorkers.spec(main, 2, args).build();
      nodes.add(new Node(new MultiNodeRun(job0, workers, maxRestarts, null,
          new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8)), out, err));
    }
    return nodes;
  }

  private static List<Integer> runAll(List<Node> nodes) throws Exception {
    List<CompletableFuture<Integer>> codes = new ArrayList<>();
    for (Node node : nodes) {
      CompletableFuture<Integer> code = new CompletableFuture<>();
      // a thread per node: the common pool may have a single thread on 2 cores, and the nodes wait for each other
      Thread.ofPlatform().daemon().start(() -> code.complete(node.run().call()));
      codes.add(code);
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
        "[node1/worker3] attempt 1 rank 3 of 4");
  }
}
