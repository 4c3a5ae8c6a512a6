package dev.ferry.rpc.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/** What attack tests do with raw sockets: trickle bytes, and tell whether the other end closed. */
public final class HostileSockets {
    private HostileSockets() {
    }

    /**
     * Whether the other end closed {@code socket}: its reads end (what it wrote before, such as a
     * HELLO reply, is read on the way) or are reset; false if the socket's read timeout passes first.
     */
    public static boolean closedByPeer(Socket socket) {
        try {
            InputStream in = socket.getInputStream();
            while (in.read() >= 0) {
                // what the peer wrote before closing
            }
            return true;
        } catch (SocketException reset) {
            return true;
        } catch (IOException timeout) {
            return false;
        }
    }

    /** Opens a socket to the attacked end. */
    @FunctionalInterface
    public interface Opener {
        Socket open() throws IOException;
    }

    /**
     * Opens {@code count} sockets, writes {@code bytes.apply(i)} on the i-th, then waits on each in
     * turn; whether the other end closed them all (each socket is closed here afterwards).
     */
    public static boolean allClosedAfterSending(int count, Opener opener, IntFunction<byte[]> bytes) throws IOException {
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                Socket socket = opener.open();
                sockets.add(socket);
                socket.getOutputStream().write(bytes.apply(i));
            }
            boolean all = true;
            for (Socket socket : sockets) {
                all &= closedByPeer(socket);
            }
            return all;
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }

    /** Starts writing {@code bytes} to {@code socket} one at a time, one every {@code every}. */
    public static Trickle trickle(Socket socket, byte[] bytes, Duration every) {
        return new Trickle(socket, bytes.clone(), every);
    }

    /** A byte at a time on its own thread, until every byte went, the socket closed, or {@link #close()}. */
    public static final class Trickle implements AutoCloseable {
        private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread trickler = new Thread(runnable, "hostile-trickle");
            trickler.setDaemon(true); // a failed test's trickle must not keep the JVM alive
            return trickler;
        });
        private final AtomicInteger sent = new AtomicInteger();

        private Trickle(Socket socket, byte[] bytes, Duration every) {
            thread.scheduleAtFixedRate(() -> {
                int next = sent.get();
                if (next >= bytes.length) {
                    return;
                }
                try {
                    socket.getOutputStream().write(bytes[next]);
                    sent.incrementAndGet();
                } catch (IOException closed) {
                    thread.shutdown(); // the other end closed it: what the test waits for
                }
            }, 0, every.toNanos(), TimeUnit.NANOSECONDS);
        }

        /** Bytes written so far. */
        public int sent() {
            return sent.get();
        }

        @Override
        public void close() {
            thread.shutdownNow();
        }
    }
}
