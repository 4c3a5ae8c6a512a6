package dev.ferry.store.etcd;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A real etcd (Debian's {@code etcd-server}, which {@code .ci/run} installs) started on free
 * ports with its own data directory, for tests (this module's, and test hosts' in ferry-examples,
 * through the test jar). Where etcd is not installed the tests are skipped with the reason, except
 * on CI ({@code CI=true}), where that fails.
 */
public final class EtcdServer implements AutoCloseable {
    private static final Path[] CANDIDATES = {Path.of("/usr/bin/etcd"), Path.of("/usr/local/bin/etcd")};

    private final Process process;
    private final Path dataDir;
    private final String host;
    private final int clientPort;
    private final Deque<String> lastLines = new ArrayDeque<>();

    private EtcdServer(Process process, Path dataDir, String host, int clientPort) {
        this.process = process;
        this.host = host;
        this.dataDir = dataDir;
        this.clientPort = clientPort;
    }

    /** Starts etcd on 127.0.0.1 and returns once it serves clients (at most 30 s). */
    public static EtcdServer start() throws Exception {
        return start("127.0.0.1");
    }

    /** Starts etcd listening on {@code host}, a local address, once it serves clients (at most 30 s). */
    public static EtcdServer start(String host) throws Exception {
        Path binary = Stream.of(CANDIDATES).filter(Files::isExecutable).findFirst().orElse(null);
        if (binary == null) {
            String why = "etcd is not installed (apt-get install etcd-server)";
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(why + "; .ci/run must install it");
            }
            Assumptions.abort(why);
        }
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) { // a free port may be taken between probe and bind
            int clientPort = freePort(host);
            int peerPort = freePort(host);
            Path dataDir = Files.createTempDirectory("ferry-etcd");
            String peer = "http://" + host + ":" + peerPort;
            String client = "http://" + host + ":" + clientPort;
            Process process = new ProcessBuilder(binary.toString(), "--name", "ferry-test",
                    "--data-dir", dataDir.toString(),
                    "--listen-client-urls", client, "--advertise-client-urls", client,
                    "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                    "--initial-cluster", "ferry-test=" + peer, "--log-level", "warn",
                    "--logger", "zap")
                    .redirectErrorStream(true).start();
            EtcdServer server = new EtcdServer(process, dataDir, host, clientPort);
            if (server.awaitReady()) {
                return server;
            }
            last = new IOException("etcd did not start: " + String.join("\n", server.lastLines));
            server.close();
        }
        throw last;
    }

    private boolean awaitReady() throws InterruptedException {
        CountDownLatch ready = new CountDownLatch(1);
        Thread.ofPlatform().daemon().name("etcd-output").start(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    synchronized (lastLines) {
                        lastLines.addLast(line);
                        if (lastLines.size() > 20) {
                            lastLines.removeFirst();
                        }
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            ready.countDown();
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && process.isAlive()) {
            try (java.net.Socket probe = new java.net.Socket(host, clientPort)) {
                return true;
            } catch (IOException notYet) {
                ready.await(20, TimeUnit.MILLISECONDS);
            }
        }
        return false;
    }

    private static int freePort(String host) throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return socket.getLocalPort();
        }
    }

    /** {@code host:port} of the client listener. */
    public String endpoint() {
        return host + ":" + clientPort;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            try (Stream<Path> files = Files.walk(dataDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
