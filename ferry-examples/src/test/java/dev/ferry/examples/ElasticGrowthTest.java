package dev.ferry.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferry.cli.launch.JobRendezvousSpec;
import dev.ferry.cli.launch.MultiNodeRun;
import dev.ferry.cli.launch.RendezvousBackend;
import dev.ferry.cli.launch.WorkerGroupSpec;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code ferry run --nnodes 1:2 --rdzv-backend zookeeper} on two launchers of this JVM (real
 * ZooKeeper, real worker JVMs): the first node's round starts alone; the second node arrives while
 * it runs, and the world restarts with both, torchrun's elastic growth.
 */
@Timeout(120)
class ElasticGrowthTest {

    /** One node's launcher and what it printed. */
    private record Node(MultiNodeRun run, ByteArrayOutputStream out, ByteArrayOutputStream err) {
        String output() {
            return out.toString(UTF_8) + err.toString(UTF_8);
        }

        CompletableFuture<Integer> start() {
            CompletableFuture<Integer> code = new CompletableFuture<>();
            Thread.ofPlatform().daemon().start(() -> code.complete(run.call()));
            return code;
        }
    }

    private static Node node(String endpoint) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        JobRendezvousSpec job = new JobRendezvousSpec(RendezvousBackend.ZOOKEEPER, endpoint, "growing", 1, 2, -1,
                "127.0.0.1", "a-token-shared-by-the-test-nodes-0123456789", Duration.ofMillis(500));
        WorkerGroupSpec workers = WorkerGroupSpec.builder()
                .nproc(1)
                .mainClass(GrowingWorldMain.class.getName())
                .classpath(System.getProperty("java.class.path"))
                .putEnv("FERRY_AUTH_TOKEN", "a-token-shared-by-the-test-nodes-0123456789")
                .build();
        return new Node(new MultiNodeRun(job, workers, 0, null, new PrintStream(out, true, UTF_8),
                new PrintStream(err, true, UTF_8)), out, err);
    }

    @Test
    void aNodeThatArrivesWhileTheWorldRunsRestartsItWithBothNodes() throws Exception {
        try (TestingServer zookeeper = new TestingServer(true)) {
            String endpoint = "127.0.0.1:" + zookeeper.getPort();
            Node first = node(endpoint);
            Node second = node(endpoint);
            try {
                CompletableFuture<Integer> firstCode = first.start();
                try {
                    await().atMost(Duration.ofSeconds(60)).until(() -> first.output().contains("] alone"));
                } catch (ConditionTimeoutException e) {
                    throw new AssertionError("the first node did not start alone:\n" + first.output(), e);
                }

                CompletableFuture<Integer> secondCode = second.start();
                assertThat(secondCode.get(90, TimeUnit.SECONDS)).as(second.output()).isZero();
                assertThat(firstCode.get(90, TimeUnit.SECONDS)).as(first.output()).isZero();
                // Round 1 ranks the nodes by arrival again: either may be node0 now.
                assertThat(first.output()).contains("restarting the world with the new node", "of 2 calls worker1: worker1")
                        .doesNotContain("restart 1 of")
                        // the last call is announced, not waited through in silence
                        .contains("ferry run: 1 of 1..2 nodes of job growing are here; the round starts in 500 ms"
                                + " (the last call for more) or when 2 are");
                assertThat(second.output()).contains("of 2 calls worker1: worker1");
                assertThat(first.output() + second.output()).contains("worker0] rank 0 of 2", "worker1] rank 1 of 2");
            } finally {
                first.run().close();
                second.run().close();
            }
        }
    }
}
