import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The floor of W3 (echo of 64 KiB and 1 MiB) and W8 (small calls behind 128 MiB echoes): what the JDK
 * alone reaches on this machine over Unix domain sockets, with blocking channels and one thread per
 * side, no serialization, no framing beyond an 8-byte length. Run: {@code java TransportFloor.java}.
 * Prints one line per measurement: median, p90, p99, max in microseconds. {@code -Dmode=} chooses W8's
 * large loop (2026-12-03): {@code socket} (the default, an echo over the socket), {@code memcpy} (two
 * 128 MiB copies, as shared memory), each optionally {@code -equals} (plus a 128 MiB compare).
 */
public final class TransportFloor {

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("floor");
        try (Echo echo = new Echo(dir.resolve("w3.sock"))) {
            for (int[] size : new int[][] {{64 << 10, 100, 1000}, {1 << 20, 20, 300}}) {
                long[] rtt = echo.time(size[0], size[1], size[2]);
                report("w3 " + (size[0] >> 10) + "KiB", rtt, size[0]);
            }
        }
        // W8: a 128 MiB echo loop on one connection, small 8-byte echoes on another to the same server.
        try (Echo large = new Echo(dir.resolve("large.sock")); Echo small = new Echo(dir.resolve("small.sock"))) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong echoes = new AtomicLong();
            AtomicLong unequal = new AtomicLong(); // the compare's result, kept so that it is not optimized away
            Thread loop = Thread.ofPlatform().start(() -> {
                ByteBuffer big = ByteBuffer.allocateDirect(128 << 20);
                ByteBuffer sent = ByteBuffer.allocateDirect(128 << 20);
                ByteBuffer shm = ByteBuffer.allocateDirect(128 << 20);
                String mode = System.getProperty("mode", "socket");
                try {
                    while (!stop.get()) {
                        if (mode.contains("memcpy")) {
                            // as shared memory: the sender copies in, the echo copies back out
                            shm.clear(); shm.put(sent.clear()); big.clear(); big.put(shm.flip());
                        } else {
                            large.once(big);
                        }
                        if (mode.contains("equals") && !big.clear().equals(sent.clear())) {
                            unequal.incrementAndGet();
                        }
                        echoes.incrementAndGet();
                    }
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            long start = System.nanoTime();
            // As many small calls as fit in 3 s (2,000 at least), so that the echoes run all along.
            long[] rtt = small.time(8, 200, 2000);
            while (System.nanoTime() - start < 3_000_000_000L) {
                long[] more = small.time(8, 0, 2000);
                long[] all = Arrays.copyOf(rtt, rtt.length + more.length);
                System.arraycopy(more, 0, all, rtt.length, more.length);
                rtt = all;
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            stop.set(true);
            loop.join();
            report("w8 small (" + rtt.length + " calls)", rtt, -1);
            System.out.printf("w8 large echoes %d (%d unequal) in %.2f s: %.2f GB/s%n", echoes.get(), unequal.get(), seconds,
                    echoes.get() * 2.0 * (128 << 20) / seconds / 1e9);
        }
    }

    private static void report(String what, long[] nanos, int bytes) {
        Arrays.sort(nanos);
        double median = nanos[nanos.length / 2] / 1e3;
        System.out.printf("%s median %.1f p90 %.1f p99 %.1f max %.1f us%s%n", what, median,
                nanos[(int) (nanos.length * 0.9)] / 1e3, nanos[(int) (nanos.length * 0.99)] / 1e3,
                nanos[nanos.length - 1] / 1e3,
                bytes > 0 ? String.format(" %.2f GB/s", 2.0 * bytes / (median * 1e3)) : "");
    }

    /** An echo server thread on a Unix socket and one client connection to it. */
    private static final class Echo implements AutoCloseable {
        private final ServerSocketChannel server;
        private final SocketChannel client;
        private final Thread serverThread;

        Echo(Path path) throws IOException {
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(path));
            serverThread = Thread.ofPlatform().daemon().start(this::serve);
            client = SocketChannel.open(UnixDomainSocketAddress.of(path));
        }

        private void serve() {
            try (SocketChannel peer = server.accept()) {
                ByteBuffer header = ByteBuffer.allocateDirect(8);
                ByteBuffer body = ByteBuffer.allocateDirect(1);
                while (true) {
                    header.clear();
                    if (!readFully(peer, header)) {
                        return;
                    }
                    int length = (int) header.flip().getLong(0);
                    if (body.capacity() < length) {
                        body = ByteBuffer.allocateDirect(length);
                    }
                    body.clear().limit(length);
                    readFully(peer, body);
                    header.rewind();
                    body.flip();
                    writeFully(peer, header);
                    writeFully(peer, body);
                }
            } catch (IOException e) {
                // the client closed
            }
        }

        void once(ByteBuffer payload) throws IOException {
            ByteBuffer header = ByteBuffer.allocate(8).putLong(0, payload.capacity());
            payload.clear();
            writeFully(client, header);
            writeFully(client, payload);
            header.clear();
            readFully(client, header);
            payload.clear();
            readFully(client, payload);
        }

        long[] time(int bytes, int warmup, int timed) throws IOException {
            ByteBuffer payload = ByteBuffer.allocateDirect(bytes);
            for (int i = 0; i < warmup; i++) {
                once(payload);
            }
            long[] rtt = new long[timed];
            for (int i = 0; i < timed; i++) {
                long t0 = System.nanoTime();
                once(payload);
                rtt[i] = System.nanoTime() - t0;
            }
            return rtt;
        }

        private static boolean readFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) {
                if (channel.read(buffer) < 0) {
                    return false;
                }
            }
            return true;
        }

        private static void writeFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        }

        @Override
        public void close() throws IOException {
            client.close();
            server.close();
        }
    }
}
