import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The floor of W6's init on this machine: what a plain JDK program (no Ferry, no library) reaches
 * for the same protocol, timed the same way. N worker JVMs each load, print READY and wait; the
 * driver sends GO to all at once and timestamps each INIT line on arrival (init_s = last INIT -
 * GO, as W6InitShutdown does). Between GO and INIT a worker does the least a rendezvous needs:
 * rank 0 listens on loopback TCP, the others connect (retrying until it listens) and send their
 * names, rank 0 answers every one with all N names, and each worker then knows the group.
 *
 * <pre>
 *   javac -d /tmp/floor InitFloor.java && java -cp /tmp/floor InitFloor 8 3   # world 8, 3 runs
 * </pre>
 * Prints one line per run: init_s, ready_s (spawn to last READY) and the mean CPU a worker spent
 * between GO and INIT.
 */
public final class InitFloor {
    public static void main(String[] args) throws Exception {
        if (args[0].equals("worker")) {
            worker(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        } else {
            int world = Integer.parseInt(args[0]);
            int runs = args.length > 1 ? Integer.parseInt(args[1]) : 1;
            for (int i = 0; i < runs; i++) {
                driver(world, i);
            }
        }
    }

    private record Line(int rank, String text, long arrival) {
    }

    static void driver(int world, int run) throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        BlockingQueue<Line> lines = new ArrayBlockingQueue<>(64);
        List<Process> workers = new ArrayList<>();
        long spawn = System.nanoTime();
        String java = ProcessHandle.current().info().command().orElse("java");
        for (int rank = 0; rank < world; rank++) {
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "InitFloor", "worker",
                    Integer.toString(rank), Integer.toString(world), Integer.toString(port))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            workers.add(p);
            int r = rank;
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        lines.put(new Line(r, line, System.nanoTime()));
                    }
                } catch (IOException | InterruptedException e) {
                    // the worker ended
                }
            });
            reader.setDaemon(true);
            reader.start();
        }
        long lastReady = awaitAll(lines, "READY", world, null);
        long go = System.nanoTime();
        for (Process p : workers) {
            p.getOutputStream().write("GO\n".getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().flush();
        }
        List<Line> results = new ArrayList<>();
        long lastInit = awaitAll(lines, "INIT", world, results);
        for (Process p : workers) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("a worker did not exit");
            }
        }
        double cpu = results.stream().mapToDouble(l -> Double.parseDouble(l.text().split(" ")[1])).average().orElse(0);
        System.out.printf(Locale.ROOT, "floor world=%d run=%d init_s=%.4f ready_s=%.3f init_cpu_s_per_worker=%.4f%n",
                world, run, (lastInit - go) / 1e9, (lastReady - spawn) / 1e9, cpu);
    }

    /** The latest arrival of {@code tag} from every rank; lines "tag value" go to {@code results}. */
    static long awaitAll(BlockingQueue<Line> lines, String tag, int world, List<Line> results) throws Exception {
        boolean[] seen = new boolean[world];
        int count = 0;
        long last = 0;
        while (count < world) {
            Line line = lines.poll(60, TimeUnit.SECONDS);
            if (line == null) {
                throw new IllegalStateException("timed out waiting for " + tag);
            }
            if (line.text().startsWith(tag) && !seen[line.rank()]) {
                seen[line.rank()] = true;
                count++;
                last = line.arrival();
                if (results != null) {
                    results.add(line);
                }
            }
        }
        return last;
    }

    static void worker(int rank, int world, int port) throws Exception {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.println("READY");
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (!"GO".equals(stdin.readLine())) {
            throw new IllegalStateException("expected GO");
        }
        long cpu0 = os.getProcessCpuTime();
        String name = "worker" + rank;
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
        String group;
        if (rank == 0) {
            try (ServerSocketChannel server = ServerSocketChannel.open().bind(address, world)) {
                List<SocketChannel> peers = new ArrayList<>();
                StringBuilder names = new StringBuilder(name);
                for (int i = 1; i < world; i++) {
                    SocketChannel peer = server.accept();
                    peers.add(peer);
                    names.append(',').append(readLine(peer));
                }
                group = names.toString();
                for (SocketChannel peer : peers) {
                    peer.write(ByteBuffer.wrap((group + "\n").getBytes(StandardCharsets.UTF_8)));
                    peer.close();
                }
            }
        } else {
            SocketChannel channel = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (channel == null) {
                try {
                    channel = SocketChannel.open(address);
                } catch (IOException notYet) {
                    if (System.nanoTime() > deadline) {
                        throw notYet;
                    }
                    Thread.onSpinWait();
                }
            }
            try (SocketChannel c = channel) {
                c.write(ByteBuffer.wrap((name + "\n").getBytes(StandardCharsets.UTF_8)));
                group = readLine(c);
            }
        }
        if (group.split(",").length != world) {
            throw new IllegalStateException("group " + group);
        }
        System.out.printf(Locale.ROOT, "INIT %.6f%n", (os.getProcessCpuTime() - cpu0) / 1e9);
        System.out.flush();
    }

    static String readLine(SocketChannel channel) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        StringBuilder line = new StringBuilder();
        while (true) {
            one.clear();
            if (channel.read(one) < 0) {
                throw new IOException("closed");
            }
            char c = (char) one.get(0);
            if (c == '\n') {
                return line.toString();
            }
            line.append(c);
        }
    }
}
