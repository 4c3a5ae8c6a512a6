package dev.ferry.examples.hosts;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.JvmFlags;
import dev.ferry.store.etcd.EtcdServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A 3-host world launched by {@code ferry run} on each of three test hosts (network namespaces with
 * their own addresses), through each rendezvous backend: static (host 0's launcher serves the store),
 * etcd and ZooKeeper (servers in the test JVM's namespace, reached over the hosts' network). Rank 0
 * calls the other two workers, which answer with the address of the host they run on.
 */
@Timeout(240)
class ThreeHostWorldTest {
    private static final String TOKEN = "three-host-world-test-token-0123456789abcdef";
    private static TestHosts hosts;

    @BeforeAll
    static void makeHosts() {
        hosts = TestHosts.create(3);
    }

    @AfterAll
    static void deleteHosts() {
        if (hosts != null) {
            hosts.close();
        }
    }

    /** A {@code ferry run} process on one host, its output collected as it comes. */
    private record Launcher(Process process, StringBuffer output) {
        /** Waits (bounded) until the output contains {@code text}. */
        void awaitOutput(String text, int seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!output.toString().contains(text)) {
                if (System.nanoTime() > deadline || !process.isAlive() && !output.toString().contains(text)) {
                    if (output.toString().contains(text)) {
                        return;
                    }
                    throw new AssertionError("no '" + text + "' within " + seconds + " s; output:\n" + output);
                }
                synchronized (output) {
                    output.wait(100);
                }
            }
        }
    }

    /** Starts {@code ferry run MAIN} on every host with these rendezvous options. */
    private static List<Launcher> startOnEveryHost(String backend, String endpoint, String job, Class<?> main)
            throws IOException {
        List<Launcher> launchers = new ArrayList<>();
        for (int host = 0; host < 3; host++) {
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            command.addAll(JvmFlags.defaults());
            command.addAll(List.of("-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-cp", System.getProperty("java.class.path"), "dev.ferry.cli.FerryCli", "run", "--no-aot-cache",
                    "--jvm-arg=-Xmx256m", "--jvm-arg=-XX:+UseSerialGC",
                    "--nnodes", "3", "--nproc-per-node", "1", "--rdzv-backend", backend,
                    "--rdzv-endpoint", endpoint, "--rdzv-id", job, "--node-rank", Integer.toString(host),
                    main.getName()));
            ProcessBuilder builder = new ProcessBuilder(hosts.on(host, command)).redirectErrorStream(true);
            builder.environment().put("FERRY_AUTH_TOKEN", TOKEN);
            Process process = builder.start();
            Launcher launcher = new Launcher(process, new StringBuffer());
            launchers.add(launcher);
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        launcher.output().append(line).append('\n');
                        synchronized (launcher.output()) {
                            launcher.output().notifyAll();
                        }
                    }
                } catch (IOException e) {
                    launcher.output().append(e).append('\n');
                }
            });
        }
        return launchers;
    }

    /** Waits (bounded) for a launcher to end; returns its exit code. */
    private static int exitCode(Launcher launcher, int host) throws InterruptedException {
        boolean ended = launcher.process().waitFor(180, TimeUnit.SECONDS);
        assertThat(ended).as("host %d's launcher ended; output:%n%s", host, launcher.output()).isTrue();
        launcher.awaitOutput("ferry run: ", 10); // its last report, read to the end of its output
        return launcher.process().exitValue();
    }

    /** Runs {@link HostWorldMain} with {@code ferry run} on every host; returns each launcher's output once all succeeded. */
    private static List<String> launchOnEveryHost(String backend, String endpoint, String job) throws Exception {
        List<Launcher> launchers = startOnEveryHost(backend, endpoint, job, HostWorldMain.class);
        try {
            List<String> results = new ArrayList<>();
            for (int host = 0; host < 3; host++) {
                Launcher launcher = launchers.get(host);
                assertThat(exitCode(launcher, host)).as("host %d's exit code; output:%n%s", host, launcher.output()).isZero();
                results.add(launcher.output().toString());
            }
            return results;
        } finally {
            launchers.forEach(l -> l.process().destroyForcibly());
        }
    }

    /** Rank 0's launcher (on whichever host the round ranked first) saw every worker on its own host. */
    private static String assertOneWorldAcrossTheHosts(List<String> outputs) {
        String first = outputs.stream().filter(o -> o.contains("[node0/worker0] worker0 runs at ")).findFirst()
                .orElseThrow(() -> new AssertionError("no launcher ran rank 0: " + outputs));
        List<String> where = first.lines().filter(l -> l.startsWith("[node0/worker0] worker") && l.contains(" runs at "))
                .map(l -> l.substring(l.indexOf(" runs at ") + " runs at ".length())).toList();
        assertThat(where).containsExactlyInAnyOrder(hosts.address(0), hosts.address(1), hosts.address(2));
        return first;
    }

    @Test
    void staticRendezvousServedByHostZero() throws Exception {
        List<String> outputs = launchOnEveryHost("static", hosts.address(0) + ":29400", "static-job");
        assertThat(assertOneWorldAcrossTheHosts(outputs)).isEqualTo(outputs.get(0))
                .contains("worker1 runs at " + hosts.address(1), "worker2 runs at " + hosts.address(2));
        assertThat(outputs.get(1)).contains("[node1/worker1]");
    }

    @Test
    void etcdRendezvous() throws Exception {
        try (EtcdServer etcd = EtcdServer.start(hosts.testAddress())) {
            assertOneWorldAcrossTheHosts(launchOnEveryHost("etcd", etcd.endpoint(), "etcd-job"));
        }
    }

    @Test
    void aLauncherKilledOnOneHostStopsTheJobOnTheOthers() throws Exception {
        try (TestingServer zookeeper = new TestingServer(true)) {
            List<Launcher> launchers = startOnEveryHost("zookeeper", hosts.testAddress() + ":" + zookeeper.getPort(),
                    "killed-launcher-job", WaitForeverMain.class);
            try {
                for (Launcher launcher : launchers) {
                    launcher.awaitOutput("joined", 120);
                }
                long killed = System.nanoTime();
                launchers.get(2).process().destroyForcibly(); // SIGKILL: it can neither stop its worker nor say so
                for (int host = 0; host < 2; host++) {
                    assertThat(exitCode(launchers.get(host), host)).isEqualTo(1);
                    assertThat(launchers.get(host).output().toString()).containsPattern(
                            "ferry run: node\\d's launcher is gone \\(its registration in the zookeeper store expired");
                }
                System.err.println("ThreeHostWorldTest: the other hosts stopped "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed) + " ms after a launcher was killed");
            } finally {
                launchers.forEach(l -> l.process().destroyForcibly());
            }
        }
    }

    @Test
    void zookeeperRendezvous() throws Exception {
        try (TestingServer zookeeper = new TestingServer(true)) {
            assertOneWorldAcrossTheHosts(launchOnEveryHost("zookeeper", hosts.testAddress() + ":" + zookeeper.getPort(),
                    "zookeeper-job"));
        }
    }
}
