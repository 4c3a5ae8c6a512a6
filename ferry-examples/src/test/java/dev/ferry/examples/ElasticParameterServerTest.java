package dev.ferry.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.ferry.cli.launch.GroupResult;
import dev.ferry.cli.launch.LineSink;
import dev.ferry.cli.launch.WorkerGroup;
import dev.ferry.cli.launch.WorkerGroupSpec;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ElasticParameterServer} on 4 JVMs started by the launcher with worker restarts: trainer
 * worker2 is killed (SIGKILL, as {@code kill -9}) mid-training and started again alone; the other trainers go on
 * meanwhile, the new worker2 resumes its shard where the server had it, and the held-out loss keeps
 * falling. Prints how long the server took to find the death, how long the trainer took to rejoin,
 * and how much work was lost. Then the replicated server: its primary is killed, the trainers go on
 * against the replica, which takes over, and the restarted primary catches up as its replica; or
 * its replica is killed, the trainers go on against the primary without failing over, and the
 * restarted replica catches up.
 */
@Timeout(180)
class ElasticParameterServerTest {
    private static final Duration BOUND = Duration.ofSeconds(60);

    /** One line a worker printed, and when the test got it. */
    private record Line(int rank, String text, long nanos) {
    }

    @Test
    void aKilledTrainerIsStartedAgainAloneAndResumesWhileTheOthersTrainOn() throws Exception {
        List<Line> lines = new CopyOnWriteArrayList<>();
        try (WorkerGroup group = new WorkerGroup(spec(4, List.of("1200"), lines)).start()) {
            awaitLine(lines, 2, l -> l.startsWith("STEP 100 "));
            Process old = group.process(2);
            long oldPid = old.pid();
            long killed = System.nanoTime();
            old.destroyForcibly(); // SIGKILL, as kill -9: no shutdown hook, no goodbye to the others
            assertThat(old.waitFor(10, TimeUnit.SECONDS)).isTrue();
            int othersAtKill = appliedByOthers(lines);

            awaitLine(lines, 0, l -> l.startsWith("LOST worker2"));
            awaitLine(lines, 0, l -> l.startsWith("RESUME worker2 at step "));
            long detected = first(lines, 0, l -> l.startsWith("LOST worker2")).nanos();
            Line resumed = first(lines, 0, l -> l.startsWith("RESUME worker2 at step "));
            int resumedAt = Integer.parseInt(resumed.text().substring("RESUME worker2 at step ".length()));
            assertThat(group.restarts(2)).isEqualTo(1);
            assertThat(group.process(2).pid()).isNotEqualTo(oldPid);
            // The other trainers never stopped: they went on while worker2 was gone.
            int othersAtResume = appliedByOthers(lines.stream().filter(l -> l.nanos() <= resumed.nanos()).toList());
            assertThat(othersAtResume).as("steps of worker1 and worker3 while worker2 was down").isGreaterThan(othersAtKill);

            GroupResult result = group.awaitCompletion(Duration.ofSeconds(120));
            String transcript = result.summary() + "\n" + transcript(lines);
            assertThat(result.succeeded()).as(transcript).isTrue();
            assertThat(resumedAt).as(transcript).isGreaterThanOrEqualTo(100);
            // Every shard finished, worker2's by its second incarnation.
            for (int rank = 1; rank <= 3; rank++) {
                int r = rank;
                assertThat(lines).as(transcript).anyMatch(l -> l.rank() == r && l.text().startsWith("STEP 1200 "));
            }
            List<Double> evals = lines.stream().filter(l -> l.rank() == 0 && l.text().startsWith("EVAL "))
                    .map(l -> Double.parseDouble(l.text().split(" ")[2])).toList();
            double atKill = lines.stream().filter(l -> l.rank() == 0 && l.text().startsWith("EVAL ") && l.nanos() <= killed)
                    .map(l -> Double.parseDouble(l.text().split(" ")[2])).reduce((a, b) -> b).orElseThrow();
            assertThat(evals.getLast()).as("held-out loss at the end vs when worker2 was killed").isLessThan(atKill);
            assertThat(lines).as(transcript).anyMatch(l -> l.rank() == 0 && l.text().startsWith("RESULT "));

            int lastOldStep = lines.stream().filter(l -> l.rank() == 2 && l.nanos() <= killed && l.text().startsWith("STEP "))
                    .mapToInt(l -> Integer.parseInt(l.text().split(" ")[1])).max().orElse(0);
            System.out.printf(Locale.ROOT, "ElasticParameterServer: death found %d ms after SIGKILL; worker2 resumed"
                            + " at step %d %d ms after it (last step it reported before: %d); worker1 and worker3 applied"
                            + " %d steps meanwhile%n",
                    TimeUnit.NANOSECONDS.toMillis(detected - killed), resumedAt,
                    TimeUnit.NANOSECONDS.toMillis(resumed.nanos() - killed), lastOldStep, othersAtResume - othersAtKill);
        }
    }

    @Test
    void theReplicatedServerGoesOnWhenItsPrimaryIsKilledAndTheRestartedOneCatchesUp() throws Exception {
        List<Line> lines = new CopyOnWriteArrayList<>();
        try (WorkerGroup group = new WorkerGroup(spec(5, List.of("3000", "replicated"), lines)).start()) {
            long killed = killOnceTraining(group, lines, 0); // the primary

            awaitLine(lines, 1, l -> l.startsWith("PRIMARY after worker0 was lost"));
            awaitLine(lines, 0, l -> l.startsWith("REPLICA OF worker1 AT "));
            GroupResult result = group.awaitCompletion(Duration.ofSeconds(120));
            String transcript = result.summary() + "\n" + transcript(lines);
            assertThat(result.succeeded()).as(transcript).isTrue();
            assertThat(group.restarts(0)).isEqualTo(1);
            assertEveryShardFinished(lines, transcript);
            for (int rank = 2; rank <= 4; rank++) {
                int r = rank;
                assertThat(lines).as(transcript).anyMatch(l -> l.rank() == r && l.text().startsWith("FAILOVER TO worker1"));
            }
            // The loss keeps falling on the server that took over.
            List<Double> afterTakeover = lines.stream().filter(l -> l.rank() == 1 && l.text().startsWith("EVAL "))
                    .map(l -> Double.parseDouble(l.text().split(" ")[2])).toList();
            assertThat(afterTakeover).as(transcript).hasSizeGreaterThan(2);
            assertThat(afterTakeover.getLast()).as("held-out loss at the end vs right after the takeover")
                    .isLessThan(afterTakeover.getFirst());
            assertBothServersHaveEveryStep(lines, transcript);

            long failover = first(lines, 2, l -> l.startsWith("FAILOVER TO worker1")).nanos();
            long promoted = first(lines, 1, l -> l.startsWith("PRIMARY")).nanos();
            long caughtUp = first(lines, 0, l -> l.startsWith("REPLICA OF worker1 AT ")).nanos();
            System.out.printf(Locale.ROOT, "ElasticParameterServer (replicated): worker2 failed over %d ms after the"
                            + " primary's SIGKILL, worker1 took over %d ms after it, the restarted worker0 was its"
                            + " replica again %d ms after it%n", TimeUnit.NANOSECONDS.toMillis(failover - killed),
                    TimeUnit.NANOSECONDS.toMillis(promoted - killed), TimeUnit.NANOSECONDS.toMillis(caughtUp - killed));
        }
    }

    @Test
    void theReplicatedServerGoesOnAgainstItsPrimaryWhenItsReplicaIsKilledAndTheRestartedOneCatchesUp()
            throws Exception {
        List<Line> lines = new CopyOnWriteArrayList<>();
        try (WorkerGroup group = new WorkerGroup(spec(5, List.of("3000", "replicated"), lines)).start()) {
            killOnceTraining(group, lines, 1); // the replica

            awaitLine(lines, 0, l -> l.startsWith("REPLICA LOST worker1"));
            awaitLine(lines, 1, l -> l.startsWith("REPLICA OF worker0 AT "));
            GroupResult result = group.awaitCompletion(Duration.ofSeconds(120));
            String transcript = result.summary() + "\n" + transcript(lines);
            assertThat(result.succeeded()).as(transcript).isTrue();
            assertThat(group.restarts(1)).isEqualTo(1);
            assertThat(group.restarts(0)).isZero();
            assertEveryShardFinished(lines, transcript);
            assertThat(lines).as("the trainers stayed with the primary: " + transcript)
                    .noneMatch(l -> l.text().startsWith("FAILOVER TO") || l.text().startsWith("PRIMARY"));
            assertBothServersHaveEveryStep(lines, transcript);
        }
    }

    /**
     * Once worker2 has trained 25 steps, SIGKILLs server {@code rank} (as {@code kill -9}) and waits
     * for its process to end; returns when it was killed.
     */
    private static long killOnceTraining(WorkerGroup group, List<Line> lines, int rank) throws InterruptedException {
        awaitLine(lines, 2, l -> l.startsWith("STEP 25 "));
        Process server = group.process(rank);
        long killed = System.nanoTime();
        server.destroyForcibly();
        assertThat(server.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return killed;
    }

    /** Every trainer (worker2 to worker4) reported its shard's last step. */
    private static void assertEveryShardFinished(List<Line> lines, String transcript) {
        for (int rank = 2; rank <= 4; rank++) {
            int r = rank;
            assertThat(lines).as(transcript).anyMatch(l -> l.rank() == r && l.text().startsWith("STEP 3000 "));
        }
    }

    /** Both servers end with every step of every shard (3 trainers of 3000 steps). */
    private static void assertBothServersHaveEveryStep(List<Line> lines, String transcript) {
        assertThat(lines).as(transcript).anyMatch(l -> l.rank() == 0 && l.text().startsWith("RESULT 9000 updates"));
        assertThat(lines).as(transcript).anyMatch(l -> l.rank() == 1 && l.text().startsWith("RESULT 9000 updates"));
    }

    /** The example on {@code nproc} JVMs with one restart per rank, its lines collected in {@code lines}. */
    private static WorkerGroupSpec spec(int nproc, List<String> args, List<Line> lines) {
        LineSink sink = (rank, stream, text) -> lines.add(new Line(rank, text, System.nanoTime()));
        return WorkerGroupSpec.builder()
                .nproc(nproc)
                .mainClass(ElasticParameterServer.class.getName())
                .args(args)
                .classpath(System.getProperty("java.class.path"))
                .workerRestarts(1)
                .sink(sink)
                .build();
    }

    /** Waits, bounded, until worker {@code rank} printed a line that passes {@code test}. */
    private static void awaitLine(List<Line> lines, int rank, Predicate<String> test) {
        try {
            await().atMost(BOUND).until(() -> lines.stream().anyMatch(l -> l.rank() == rank && test.test(l.text())));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("worker " + rank + " did not print the line awaited:\n" + transcript(lines), e);
        }
    }

    private static String transcript(List<Line> lines) {
        return String.join("\n", lines.stream().map(l -> l.rank() + "|" + l.text()).toList());
    }

    private static Line first(List<Line> lines, int rank, Predicate<String> test) {
        return lines.stream().filter(l -> l.rank() == rank && test.test(l.text())).findFirst().orElseThrow();
    }

    /** The highest step worker1 and worker3 reported, summed. */
    private static int appliedByOthers(List<Line> lines) {
        int sum = 0;
        for (int rank : new int[] {1, 3}) {
            sum += lines.stream().filter(l -> l.rank() == rank && l.text().startsWith("STEP "))
                    .mapToInt(l -> Integer.parseInt(l.text().split(" ")[1])).max().orElse(0);
        }
        return sum;
    }
}
