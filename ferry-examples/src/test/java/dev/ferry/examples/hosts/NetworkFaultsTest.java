package dev.ferry.examples.hosts;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.JvmFlags;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A 3-worker world on three test hosts, driven through rank 0 ({@link CallerMain}), under faults
 * of the network between the hosts: packet loss and delay, and a partition that heals.
 */
@Timeout(240)
class NetworkFaultsTest {
    private static final String TOKEN = "network-faults-test-token-0123456789abcdef";
    private TestHosts hosts;
    private final List<Process> workers = new ArrayList<>();
    private final BlockingQueue<String> rank0 = new LinkedBlockingQueue<>();
    private final StringBuilder transcript = new StringBuilder();
    private PrintStream commands;

    @BeforeEach
    void makeHosts() {
        hosts = TestHosts.create(3);
    }

    @AfterEach
    void stopWorld() {
        workers.forEach(Process::destroyForcibly);
        if (hosts != null) {
            hosts.close();
        }
    }

    /** Starts one worker per host and waits until each printed {@code ready}. */
    private void startWorld() throws Exception {
        List<BlockingQueue<String>> lines = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            command.addAll(JvmFlags.defaults());
            command.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                    CallerMain.class.getName()));
            ProcessBuilder builder = new ProcessBuilder(hosts.on(rank, command)).redirectErrorStream(true);
            builder.environment().putAll(java.util.Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", "3",
                    "MASTER_ADDR", hosts.address(0), "MASTER_PORT", "29500", "FERRY_SOCKET_HOST", hosts.address(rank),
                    "FERRY_AUTH_TOKEN", TOKEN, "FERRY_APPLICATION_PACKAGES", CallerMain.class.getPackageName()));
            Process worker = builder.start();
            workers.add(worker);
            BlockingQueue<String> queue = rank == 0 ? rank0 : new LinkedBlockingQueue<>();
            lines.add(queue);
            int r = rank;
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream(), UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        synchronized (transcript) {
                            transcript.append('[').append(r).append("] ").append(line).append('\n');
                        }
                        queue.add(line);
                    }
                } catch (IOException e) {
                    queue.add("output ended: " + e);
                }
            });
        }
        commands = new PrintStream(workers.get(0).getOutputStream(), true, UTF_8);
        for (BlockingQueue<String> queue : lines) {
            awaitLine(queue, "ready", 90);
        }
    }

    private String awaitLine(BlockingQueue<String> queue, String prefix, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String line = queue.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("no line '" + prefix + "...' within " + seconds + " s; transcript:\n" + transcript);
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** Sends one command to rank 0 and returns its answer. */
    private String ask(String command, int seconds) throws InterruptedException {
        commands.println(command);
        return awaitLine(rank0, command.split(" ")[0] + " ", seconds);
    }

    @Test
    void callsAcrossLossyDelayedLinksAreCorrectAndTimeoutsHold() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(TestHosts.hasNftables(), "packet loss needs nftables (apt-get install nftables)");
        String delayedBy = null;
        for (int host = 0; host < 3; host++) {
            hosts.loseTcpPackets(host, 1);
            delayedBy = hosts.delay(host, 5);
        }
        // Neither netem nor iptables and python3: loss still applies, delay does not (the test says so).
        System.err.println("NetworkFaultsTest: links lose 1 % of TCP packets and are " + (delayedBy == null
                ? "NOT delayed (no tc netem in this kernel, and no iptables or python3 for NFQUEUE)"
                : "5 ms slower each way (" + delayedBy + ")"));
        startWorld();
        if (delayedBy != null) {
            // The delay is real: a call's round trip crosses two delayed links.
            long rtt = Long.parseLong(ask("rtt", 60).split(" ")[1]);
            System.err.println("NetworkFaultsTest: a call's round trip to worker1 takes " + rtt + " µs (median of 21)");
            assertThat(rtt).as("round trip of a call to worker1 (µs)").isGreaterThanOrEqualTo(10_000);
        }
        assertThat(ask("echo 60 65536", 120)).isEqualTo("echo ok");
        String slow = ask("slow 300", 30);
        assertThat(slow).startsWith("slow TIMEOUT ");
        long millis = Long.parseLong(slow.split(" ")[2]);
        assertThat(millis).as("the 300 ms timeout held, not the callee's 3 s").isBetween(250L, 2_500L);
        commands.println("quit");
        assertThat(workers.get(0).waitFor(60, TimeUnit.SECONDS)).as(transcript.toString()).isTrue();
    }

    @Test
    void aPartitionFailsCallsToTheCutOffHostAndHealsWithoutRestarts() throws Exception {
        startWorld();
        assertThat(ask("call 5000", 30)).isEqualTo("call ok");

        hosts.partition(1);
        String during = ask("call 20000", 60);
        System.err.println("NetworkFaultsTest: during the partition: " + during);
        // Nothing on the wire says the link is down: heartbeats find worker1 silent, and the call
        // fails UNAVAILABLE naming it within the bound (plus a fifth), long before its own timeout.
        assertThat(during).matches("call UNAVAILABLE \\d+ .*worker1 is lost.*");
        assertThat(Long.parseLong(during.split(" ")[2])).isLessThan(CallerMain.HEARTBEAT_TIMEOUT.toMillis() * 6 / 5 + 5_000);

        hosts.heal(1);
        String after = "";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!after.equals("call ok") && System.nanoTime() < deadline) {
            after = ask("call 3000", 60);
        }
        assertThat(after).as("calls to worker1 after the partition healed; transcript:\n" + transcript).isEqualTo("call ok");
        assertThat(workers).allMatch(Process::isAlive);
        commands.println("quit");
        assertThat(workers.get(0).waitFor(60, TimeUnit.SECONDS)).as(transcript.toString()).isTrue();
    }
}
