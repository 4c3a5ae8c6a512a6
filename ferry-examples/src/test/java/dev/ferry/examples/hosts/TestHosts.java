package dev.ferry.examples.hosts;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;

/**
 * Test hosts on this machine: one network namespace per host, each with its own address, all
 * joined through a bridge in a "switch" namespace; the test JVM's own namespace is joined too (at
 * {@link #testAddress()}), so servers in the test JVM (ZooKeeper) or started by it (etcd) are
 * reachable from every host. Made with iproute2 and, for packet loss, nftables; needs root.
 *
 * <pre>
 *   host0 198.18.N.1 ─┐
 *   host1 198.18.N.2 ─┼─ bridge (switch namespace) ── test JVM 198.18.N.254
 *   host2 198.18.N.3 ─┘
 * </pre>
 *
 * <p>198.18.0.0/15 is the range set aside for network tests (RFC 2544): no real host has it.
 * {@link #partition(int)} downs a host's link (its port on the bridge), {@link #heal(int)} brings it
 * back; {@link #loseTcpPackets(int, int)} drops that share of a host's outgoing TCP packets; {@link
 * #delay(int, int)} delays every packet a host sends, with {@code tc netem} where the kernel has it,
 * else by holding the packets in an NFQUEUE queue ({@code packet_delay.py}, beside this class).
 * {@link #close()}
 * deletes every namespace (their processes are killed first), and a shutdown hook does the same
 * if the JVM ends before the test closed them.
 */
final class TestHosts implements AutoCloseable {
    private static final AtomicInteger NETWORKS = new AtomicInteger();

    private final String tag;
    private final int net;
    private final int count;
    private final List<String> namespaces = new ArrayList<>();
    private final Thread cleanupHook = new Thread(this::deleteNamespaces, "test-hosts-cleanup");
    private boolean closed;

    private TestHosts(int count) {
        // interface names are at most 15 characters: keep the tag short and unique per JVM and network
        this.net = (int) (ProcessHandle.current().pid() % 200) + NETWORKS.getAndIncrement();
        this.tag = "fy" + net;
        this.count = count;
    }

    /**
     * {@code count} hosts, or the test is skipped (saying why) where namespaces cannot be made:
     * not root, no iproute2, or a sandbox that forbids them.
     */
    static TestHosts create(int count) {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip")),
                "test hosts need iproute2's ip (apt-get install iproute2)");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "test hosts need root to make network namespaces (CI runs as root)");
        IOException failure = null;
        for (int attempt = 0; attempt < 5; attempt++) { // another test JVM on this machine may hold the name
            TestHosts hosts = new TestHosts(count);
            Runtime.getRuntime().addShutdownHook(hosts.cleanupHook);
            try {
                hosts.build();
                return hosts;
            } catch (IOException e) {
                hosts.close();
                failure = e;
            }
        }
        Assumptions.abort("cannot make network namespaces here: " + failure.getMessage());
        throw new AssertionError("unreachable");
    }

    private String switchNs() {
        return tag + "-sw";
    }

    private String hostNs(int host) {
        return tag + "-h" + host;
    }

    private void build() throws IOException {
        run("ip", "netns", "add", switchNs());
        namespaces.add(switchNs());
        run("ip", "-n", switchNs(), "link", "add", "br0", "type", "bridge");
        run("ip", "-n", switchNs(), "link", "set", "br0", "up");
        for (int host = 0; host < count; host++) {
            run("ip", "netns", "add", hostNs(host));
            namespaces.add(hostNs(host));
            // the host's end is created in its namespace, the switch's end on the bridge
            run("ip", "-n", hostNs(host), "link", "add", "eth0", "type", "veth", "peer", "name", "p" + host,
                    "netns", switchNs());
            run("ip", "-n", hostNs(host), "addr", "add", address(host) + "/24", "dev", "eth0");
            run("ip", "-n", hostNs(host), "link", "set", "eth0", "up");
            run("ip", "-n", hostNs(host), "link", "set", "lo", "up");
            run("ip", "-n", switchNs(), "link", "set", "p" + host, "master", "br0");
            run("ip", "-n", switchNs(), "link", "set", "p" + host, "up");
        }
        // the test JVM's namespace: a veth whose far end is on the bridge (deleted with the switch namespace)
        run("ip", "link", "add", tag + "-t", "type", "veth", "peer", "name", "pt", "netns", switchNs());
        run("ip", "addr", "add", testAddress() + "/24", "dev", tag + "-t");
        run("ip", "link", "set", tag + "-t", "up");
        run("ip", "-n", switchNs(), "link", "set", "pt", "master", "br0");
        run("ip", "-n", switchNs(), "link", "set", "pt", "up");
    }

    /** The address of {@code host}. */
    String address(int host) {
        return "198.18." + net + "." + (host + 1);
    }

    /** The address of the test JVM on the hosts' network. */
    String testAddress() {
        return "198.18." + net + ".254";
    }

    /** {@code command} to run on {@code host}: {@code ip netns exec <host> command...}. */
    List<String> on(int host, List<String> command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", hostNs(host)));
        full.addAll(command);
        return full;
    }

    /** Takes {@code host} off the network: its port on the bridge goes down. */
    void partition(int host) throws IOException {
        run("ip", "-n", switchNs(), "link", "set", "p" + host, "down");
    }

    /** Puts {@code host} back on the network. */
    void heal(int host) throws IOException {
        run("ip", "-n", switchNs(), "link", "set", "p" + host, "up");
    }

    /** Drops {@code percent} % of the TCP packets {@code host} sends, at random (nftables' numgen). */
    void loseTcpPackets(int host, int percent) throws IOException {
        run("ip", "netns", "exec", hostNs(host), "nft", "add", "table", "inet", "ferrytest");
        run("ip", "netns", "exec", hostNs(host), "nft", "add", "chain", "inet", "ferrytest", "out",
                "{ type filter hook output priority 0; policy accept; }");
        run("ip", "netns", "exec", hostNs(host), "nft", "add", "rule", "inet", "ferrytest", "out",
                "meta", "l4proto", "tcp", "numgen", "random", "mod", "100", "lt", Integer.toString(percent), "drop");
    }

    /** Whether nftables is installed, for {@link #loseTcpPackets}. */
    static boolean hasNftables() {
        return Files.isExecutable(Path.of("/usr/sbin/nft"));
    }

    /**
     * Delays every packet {@code host} sends to the others by {@code millis}: with {@code tc netem}
     * where the kernel has it, else (the project's VMs have no {@code sch_netem}) with an iptables
     * rule that sends the host's outgoing packets to an NFQUEUE queue and {@code packet_delay.py},
     * running on the host, that lets each go {@code millis} after it was queued. Returns how it
     * delays, or null (and nothing changed) when it cannot: no netem and no iptables or python3.
     */
    String delay(int host, int millis) throws IOException {
        if (exec(List.of("ip", "netns", "exec", hostNs(host), "tc", "qdisc", "add", "dev", "eth0",
                "root", "netem", "delay", millis + "ms")).code() == 0) {
            return "tc netem";
        }
        Path python = Files.isExecutable(Path.of("/usr/bin/python3")) ? Path.of("/usr/bin/python3") : null;
        if (python == null || !Files.isExecutable(Path.of("/usr/sbin/iptables"))) {
            return null;
        }
        Path script = Files.createTempFile("packet_delay", ".py");
        script.toFile().deleteOnExit();
        try (var in = TestHosts.class.getResourceAsStream("packet_delay.py")) {
            Files.write(script, in.readAllBytes());
        }
        Process delayer = new ProcessBuilder(on(host, List.of(python.toString(), script.toString(), "0",
                Integer.toString(millis)))).redirectErrorStream(true).start();
        String first;
        try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(delayer.getInputStream(), UTF_8))) {
            first = out.readLine(); // "ready" once the queue is bound; then it prints nothing
        }
        if (!"ready".equals(first)) {
            delayer.destroyForcibly();
            throw new IOException("packet_delay.py did not start on host " + host + ": " + first);
        }
        // --queue-bypass: were the delayer to die, packets would pass undelayed rather than stop.
        run("ip", "netns", "exec", hostNs(host), "iptables", "-A", "OUTPUT", "-o", "eth0", "-j", "NFQUEUE",
                "--queue-num", "0", "--queue-bypass");
        return "NFQUEUE (packet_delay.py)";
    }

    private record ProcessResult(int code, String output) {
    }

    private static ProcessResult exec(List<String> command) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish within 20 s");
            }
            return new ProcessResult(process.exitValue(), new String(process.getInputStream().readAllBytes(), UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running " + command, e);
        }
    }

    private static void run(String... command) throws IOException {
        ProcessResult result = exec(List.of(command));
        if (result.code() != 0) {
            throw new IOException(String.join(" ", command) + " failed (" + result.code() + "): "
                    + result.output().strip());
        }
    }

    /** Kills what still runs on the hosts and deletes every namespace. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        deleteNamespaces();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or ran
        }
    }

    private void deleteNamespaces() {
        for (String namespace : namespaces.reversed()) {
            try {
                ProcessResult pids = exec(List.of("ip", "netns", "pids", namespace));
                for (String pid : pids.output().split("\\s+")) {
                    if (!pid.isBlank()) {
                        ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                exec(List.of("ip", "netns", "del", namespace));
            } catch (IOException | NumberFormatException e) {
                System.err.println("could not delete test namespace " + namespace + ": " + e);
            }
        }
    }
}
