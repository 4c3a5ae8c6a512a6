package dev.ferry.examples;

import dev.ferry.cli.launch.GroupResult;
import dev.ferry.rpc.testing.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** Real worker JVMs started by the launcher, rendezvous by env://, as {@code ./ferry demo} does. */
@Timeout(120)
class MultiProcessTest {

    private static GroupResult run(String mainClass, int nproc, List<String> lines) throws Exception {
        return run(mainClass, nproc, lines, Map.of());
    }

    private static GroupResult run(String mainClass, int nproc, List<String> lines, Map<String, String> env)
            throws Exception {
        ExampleRun run = ExampleRun.of(mainClass, nproc, env, List.of());
        lines.addAll(run.lines);
        return run.result;
    }

    @Test
    void helloClusterRunsOnThreeProcesses() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        GroupResult result = run(HelloCluster.class.getName(), 3, lines);
        assertThat(result.succeeded()).as(result.summary() + "\n" + String.join("\n", lines)).isTrue();
        assertThat(lines).anyMatch(l -> l.startsWith("0|") && l.contains("hello worker0, from worker2"));
        assertThat(lines).anyMatch(l -> l.contains("nested") && l.contains("hops=2"));
        assertThat(lines).anyMatch(l -> l.contains("async    -> 42"));
        assertThat(lines).anyMatch(l -> l.contains("java.lang.ArithmeticException on worker2"));
        assertThat(lines).noneMatch(l -> l.contains("the JVM exits with"));
        for (int rank = 0; rank < 3; rank++) {
            String prefix = rank + "|";
            assertThat(lines).anyMatch(l -> l.startsWith(prefix) && l.contains("{worker2=20, worker0=0, worker1=10}"));
        }
    }

    @Test
    void helloClusterRunsOverTlsFromTheEnvironmentAndABadKeyStoreStopsIt(@TempDir Path dir) throws Exception {
        Path store = TestCertificates.keyStore(dir, "cluster");
        // Host names verified too: the certificate names 127.0.0.1, where the launched workers listen.
        Map<String, String> tls = Map.of("FERRY_UNIX_SOCKETS", "0", "FERRY_TLS_KEYSTORE", store.toString(),
                "FERRY_TLS_KEYSTORE_PASSWORD", new String(TestCertificates.PASSWORD), "FERRY_TLS_VERIFY_HOSTNAMES", "1");
        List<String> lines = new CopyOnWriteArrayList<>();
        GroupResult result = run(HelloCluster.class.getName(), 3, lines, tls);
        assertThat(result.succeeded()).as(result.summary() + "\n" + String.join("\n", lines)).isTrue();
        assertThat(lines).anyMatch(l -> l.startsWith("0|") && l.contains("hello worker0, from worker2"));

        // The same with a wrong password: the workers read the variables, and refuse to start without TLS.
        List<String> refused = new CopyOnWriteArrayList<>();
        Map<String, String> wrong = new java.util.HashMap<>(tls);
        wrong.put("FERRY_TLS_KEYSTORE_PASSWORD", "wrong");
        assertThat(run(HelloCluster.class.getName(), 2, refused, wrong).succeeded()).isFalse();
        assertThat(refused).anyMatch(l -> l.contains("cannot read the key store " + store));
    }

    @Test
    void largeBuffersBetweenProcessesOnOneHostGoThroughSharedMemory() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.netty.channel.epoll.Epoll.isAvailable()
                && java.nio.file.Files.isWritable(java.nio.file.Path.of("/dev/shm")));
        List<String> lines = new CopyOnWriteArrayList<>();
        GroupResult result = run(SharedMemoryEchoMain.class.getName(), 2, lines);
        assertThat(result.succeeded()).as(result.summary() + "\n" + String.join("\n", lines)).isTrue();
        assertThat(lines).contains("0|RESULT intact 30", "0|RESULT transport uds+shm", "0|RESULT fallbacks 0");
        // Both ways through shared memory: most calls (the first may precede the negotiation).
        for (int rank = 0; rank < 2; rank++) {
            String prefix = rank + "|RESULT shm-sent ";
            assertThat(lines).anySatisfy(l -> assertThat(l).startsWith(prefix)
                    .satisfies(x -> assertThat(Integer.parseInt(x.substring(prefix.length()))).isGreaterThanOrEqualTo(29)));
        }
    }

    @Test
    void synchronousCallsTakeLanesBetweenProcessesAndACrashOnOneFailsOnlyItsCall() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        GroupResult result = run(SyncLanesMain.class.getName(), 3, lines);
        assertThat(result.succeeded()).as(result.summary() + "\n" + String.join("\n", lines)).isTrue();
        assertThat(lines).contains("0|RESULT lanes yes", "0|RESULT survivor-on-lane yes");
        assertThat(lines).anyMatch(l -> l.startsWith("0|RESULT crash-call UNAVAILABLE"));
    }

    @Test
    void theAutogradContextsOfACrashedCreatorAreReleasedOnTheWorkersTheyReached() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        GroupResult result = run(LostCreatorMain.class.getName(), 3, lines);
        assertThat(result.succeeded()).as(result.summary() + "\n" + String.join("\n", lines)).isTrue();
        assertThat(lines).anyMatch(l -> l.startsWith("1|RESULT released after"));
        assertThat(lines).anyMatch(l -> l.startsWith("2|RESULT released after"));
    }

    @Test
    void aCrashedWorkerFailsCallsToItPromptlyAndTheOthersGoOn() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        GroupResult result = run(CrashingWorkerMain.class.getName(), 3, lines);
        assertThat(result.succeeded()).as(result.summary() + "\n" + String.join("\n", lines)).isTrue();
        assertThat(lines).anyMatch(l -> l.startsWith("0|RESULT crash-call UNAVAILABLE"));
        assertThat(lines).contains("0|RESULT survivor 5");
        // The survivors shut down gracefully without it, and say so.
        assertThat(lines).anyMatch(l -> l.startsWith("0|RESULT missing worker2"));
        assertThat(lines).anyMatch(l -> l.startsWith("1|RESULT missing worker2"));
    }

    @Test
    void aProgramThatFailsBeforeAGatherEndsTheGroupNamingItsError() throws Exception {
        ExampleRun run = ExampleRun.of(FailBeforeGatherMain.class.getName(), 3);
        GroupResult result = run.result;
        List<String> lines = run.lines;
        String transcript = run.transcript();

        assertThat(result.outcome()).as(transcript).isEqualTo(GroupResult.Outcome.FAILED);
        // Well before the gather's 60 s timeout: worker1 told the others it left without taking part.
        assertThat(result.elapsed()).as(transcript).isLessThan(java.time.Duration.ofSeconds(45));
        assertThat(lines).noneMatch(l -> l.contains("RESULT gathered"));
        assertThat(result.summary()).as(transcript)
                .contains("java.lang.IllegalStateException: worker1 cannot read its shard");
        assertThat(lines).as(transcript).anyMatch(l -> (l.startsWith("0|") || l.startsWith("2|"))
                && l.contains("began shutdown without taking part"));
        // The gather's leader answers each refused member without a warning of its own per member.
        assertThat(lines).as(transcript).noneMatch(l -> l.contains("failed running request"));
    }

    @Test
    void aWorkerWhoseMainEndsWithoutShutdownSaysSoAsItLeaves() throws Exception {
        ExampleRun run = ExampleRun.of(ForgottenShutdownMain.class.getName(), 3);
        GroupResult result = run.result;
        List<String> lines = run.lines;
        String transcript = run.transcript();

        assertThat(result.succeeded()).as(transcript).isTrue();
        assertThat(lines).as(transcript).contains("1|RESULT worker1 returns from main");
        assertThat(lines).as(transcript).anyMatch(l -> l.startsWith("1|") && l.contains("WARN")
                && l.contains("worker1: the JVM exits with this worker's RPC agent still running, and the thread that"
                        + " started it (main) has ended without shutting it down"));
        // Neither the graceful worker nor the one that called System.exit is warned about.
        assertThat(lines).as(transcript).noneMatch(l -> (l.startsWith("0|") || l.startsWith("2|"))
                && l.contains("the JVM exits with"));
    }

    @Test
    void anRRefsFailedValueIsLoggedOnceOnItsOwnerHoweverOftenItIsFetched() throws Exception {
        ExampleRun run = ExampleRun.of(FailedRRefMain.class.getName(), 2);
        GroupResult result = run.result;
        List<String> lines = run.lines;
        String transcript = run.transcript();

        assertThat(result.succeeded()).as(transcript).isTrue();
        assertThat(lines).as(transcript).filteredOn(l -> l.startsWith("0|RESULT toHere"))
                .containsExactly("0|RESULT toHere REMOTE_ERROR java.lang.IllegalStateException: no shard 7",
                        "0|RESULT toHere REMOTE_ERROR java.lang.IllegalStateException: no shard 7",
                        "0|RESULT toHere REMOTE_ERROR java.lang.IllegalStateException: no shard 7");
        assertThat(lines).as(transcript).filteredOn(l -> l.startsWith("0|RESULT call"))
                .containsExactly("0|RESULT call REMOTE_ERROR java.lang.IllegalStateException: no shard 7");
        assertThat(lines).as(transcript).filteredOn(l -> l.startsWith("1|") && l.contains("WARN"))
                .singleElement().asString().contains("(FailedRRefMain::noShard)", "no shard 7");
    }
}
