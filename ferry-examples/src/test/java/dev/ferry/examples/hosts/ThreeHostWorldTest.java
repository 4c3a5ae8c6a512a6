package dev.ferry.examples.hosts;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.JvmFlags;
import dev.ferry.store.etcd.EtcdServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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

    /** Starts {@code ferry run} on every host with these rendezvous options and returns each one's exit and output. */
    private static List<String> launchOnEveryHost(String backend, String endpoint, String job) throws Exception {
        List<Process> launchers = new ArrayList<>();
        List<CompletableFuture<String>> outputs = new ArrayList<>();
        try {
            for (int host = 0; host < 3; host++) {
                List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
                command.addAll(JvmFlags.defaults());
                command.addAll(List.of("-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                        "-cp", System.getProperty("java.class.path"), "dev.ferry.cli.FerryCli", "run", "--no-aot-cache",
                        "--jvm-arg=-Xmx256m", "--jvm-arg=-XX:+UseSerialGC",
                        "--nnodes", "3", "--nproc-per-node", "1", "--rdzv-backend", backend,
                        "--rdzv-endpoint", endpoint, "--rdzv-id", job, "--node-rank", Integer.toString(host),
                        HostWorldMain.class.getName()));
                ProcessBuilder builder = new ProcessBuilder(hosts.on(host, command)).redirectErrorStream(true);
                builder.environment().put("FERRY_AUTH_TOKEN", TOKEN);
                Process launcher = builder.start();
                launchers.add(launcher);
                outputs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return new String(launcher.getInputStream().readAllBytes(), UTF_8);
                    } catch (IOException e) {
                        return e.toString();
                    }
                }, task -> Thread.ofPlatform().daemon().start(task))); // not the common pool: it may have one thread
            }
            List<String> results = new ArrayList<>();
            for (int host = 0; host < 3; host++) {
                Process launcher = launchers.get(host);
                boolean ended = launcher.waitFor(180, TimeUnit.SECONDS);
                String output = outputs.get(host).get(10, TimeUnit.SECONDS);
                assertThat(ended).as("host %d's launcher ended; output:%n%s", host, output).isTrue();
                assertThat(launcher.exitValue()).as("host %d's exit code; output:%n%s", host, output).isZero();
                results.add(output);
            }
            return results;
        } finally {
            launchers.forEach(Process::destroyForcibly);
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
    void zookeeperRendezvous() throws Exception {
        try (TestingServer zookeeper = new TestingServer(true)) {
            assertOneWorldAcrossTheHosts(launchOnEveryHost("zookeeper", hosts.testAddress() + ":" + zookeeper.getPort(),
                    "zookeeper-job"));
        }
    }
}
