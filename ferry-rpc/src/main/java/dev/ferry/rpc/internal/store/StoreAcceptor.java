package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.internal.observe.RateLimitedLog;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.HandshakeDeadlines;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts the store's clients and drives every handshake on one thread without blocking (a
 * selector), so a connection that has not proved itself holds no thread of its own: each costs its
 * socket and a {@link StoreHandshake}'s two fixed buffers. At most {@code maxPendingHandshakes}
 * are in their handshake at once; while that many are, this thread stops accepting (further
 * clients wait in the kernel's backlog, costing this process nothing). A handshake not through
 * within the handshake timeout of its accept is closed, whatever trickles in meanwhile.
 *
 * <p>A connection whose handshake is through goes to {@link Handover#handshaken} in blocking mode;
 * one that starts TLS goes, its first byte taken, to {@link Handover#startsTls}, still counted as
 * pending until it calls the {@code handshakeEnded} it was given (TLS's own handshake runs on a
 * thread of its connection: the one exception to "no thread of its own", bounded by the same limit
 * and timeout).
 *
 * <p>Thread-safe.
 */
final class StoreAcceptor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreAcceptor.class);
    private static final Duration JOIN_TIMEOUT = Duration.ofSeconds(5);

    /** Where connections go once this thread is done with them; called on this thread. */
    interface Handover {
        /** The plain handshake is through; the channel is in blocking mode. */
        void handshaken(SocketChannel channel);

        /**
         * The client started TLS (its first byte, 0x16, taken); the channel is in blocking mode and
         * its handshake must end, with {@code handshakeEnded}, by {@code deadlineNanos} ({@link System#nanoTime}).
         */
        void startsTls(SocketChannel channel, long deadlineNanos, Runnable handshakeEnded);
    }

    private final ServerSocketChannel listener;
    private final Selector selector;
    private final PeerAuthentication auth;
    private final boolean tls;
    private final ConnectionLimits limits;
    private final Handover handover;
    private final RateLimitedLog drops;
    private final AtomicInteger pending = new AtomicInteger();
    private final Thread thread;
    private volatile boolean closed;

    StoreAcceptor(ServerSocketChannel listener, PeerAuthentication auth, boolean tls, ConnectionLimits limits,
                  Handover handover, RateLimitedLog drops, String threadName) throws IOException {
        this.listener = listener;
        this.auth = auth;
        this.tls = tls;
        this.limits = limits;
        this.handover = handover;
        this.drops = drops;
        this.selector = Selector.open();
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
        this.thread = Thread.ofPlatform().daemon().name(threadName).unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    /** Accepted connections still in their handshake (TLS ones included). */
    int pendingHandshakes() {
        return pending.get();
    }

    /** Whether this acceptor's thread is running. */
    boolean isAlive() {
        return thread.isAlive();
    }

    private void run() {
        SelectionKey accepting = listener.keyFor(selector);
        try {
            while (!closed) {
                accepting.interestOps(pending.get() < limits.maxPendingHandshakes() ? SelectionKey.OP_ACCEPT : 0);
                List<Pending> through = new ArrayList<>();
                selector.select(key -> {
                    if (key.attachment() instanceof Pending handshake) {
                        if (handshake.step(key)) {
                            through.add(handshake);
                        }
                    } else {
                        accept();
                    }
                }, HandshakeDeadlines.selectMillis(selector, Pending.class, Pending::deadline));
                HandshakeDeadlines.expire(selector, Pending.class, Pending::deadline, this::expire);
                handOver(through);
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                log.error("TcpStore server stopped accepting connections", e);
            }
        } finally {
            // Only this thread uses the selector: what is still in it (handshakes, the listener) closes here.
            for (SelectionKey key : selector.keys()) {
                if (key.attachment() instanceof Pending handshake) {
                    handshake.end();
                }
                closeQuietly(key.channel());
            }
            closeQuietly(selector);
        }
    }

    private void accept() {
        SocketChannel channel;
        while (pending.get() < limits.maxPendingHandshakes() && (channel = acceptOne()) != null) {
            pending.incrementAndGet();
            Pending handshake = new Pending(channel, System.nanoTime() + limits.handshakeTimeout().toNanos());
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.register(selector, SelectionKey.OP_READ, handshake);
            } catch (IOException e) {
                log.debug("Rejected store client {}: {}", handshake.peer, e.toString());
                handshake.close();
            }
        }
    }

    private SocketChannel acceptOne() {
        try {
            return listener.accept();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the listener failed: this acceptor stops, logging why
        }
    }

    /**
     * Deregisters the channels whose handshake is through (a channel leaves the selector only at its
     * next selection) and hands them over in blocking mode.
     */
    private void handOver(List<Pending> through) throws IOException {
        if (through.isEmpty()) {
            return;
        }
        // Readiness is level-triggered: what this selection finds ready is found again by the next.
        selector.selectNow(key -> { });
        for (Pending handshake : through) {
            try {
                handshake.channel.configureBlocking(true);
            } catch (IOException e) {
                log.debug("Store client {} lost at its handover: {}", handshake.peer, e.toString());
                handshake.close();
                continue;
            }
            if (handshake.state.startsTls()) {
                handover.startsTls(handshake.channel, handshake.deadline, handshake::end);
            } else {
                handshake.end();
                handover.handshaken(handshake.channel);
            }
        }
    }

    private void expire(Pending handshake) {
        drops.warn("Dropping store client {}: no handshake within {} ms", handshake.peer,
                limits.handshakeTimeout().toMillis());
        handshake.close();
    }

    /** One accepted connection in its handshake; only the accepting thread touches it, but for {@link #end}. */
    private final class Pending {
        private final SocketChannel channel;
        private final long deadline;
        private final String peer;
        private final StoreHandshake state;
        /** Set once the slot is free; a TLS connection's thread may end its handshake. */
        private final AtomicBoolean ended = new AtomicBoolean();

        Pending(SocketChannel channel, long deadline) {
            this.channel = channel;
            this.deadline = deadline;
            this.peer = peerOf(channel);
            this.state = new StoreHandshake(auth, tls, peer);
        }

        long deadline() {
            return deadline;
        }

        /** Reads and writes what the socket allows; returns whether the handshake is through (or TLS starts). */
        boolean step(SelectionKey key) {
            ByteBuffer in = state.input();
            ByteBuffer out = state.output();
            try {
                while (true) {
                    if (out.hasRemaining() && channel.write(out) == 0) {
                        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        return false; // the selector says when there is room
                    }
                    if (state.done() || state.startsTls()) {
                        key.cancel();
                        return true;
                    }
                    int read = channel.read(in);
                    if (read < 0) {
                        throw new EOFException("closed during its handshake");
                    }
                    if (in.hasRemaining()) {
                        key.interestOps(SelectionKey.OP_READ);
                        return false;
                    }
                    state.advance();
                }
            } catch (StoreHandshake.Refused e) {
                sayLastWords(out);
                drops.warn("Dropping store client {}: {}", peer, e.getMessage());
                close();
            } catch (IOException e) {
                log.debug("Store client {} gone in its handshake: {}", peer, e.toString());
                close();
            }
            return false;
        }

        /** What the client should read before the close (an error frame), if the socket takes it now. */
        private void sayLastWords(ByteBuffer out) {
            try {
                channel.write(out);
            } catch (IOException e) {
                log.trace("Store client {} did not take its refusal: {}", peer, e.toString());
            }
        }

        /** The handshake is over, whichever way: its slot is free (once). */
        void end() {
            if (ended.compareAndSet(false, true)) {
                pending.decrementAndGet();
                selector.wakeup(); // accepting may resume
            }
        }

        void close() {
            end();
            closeQuietly(channel); // cancels its key
        }
    }

    private static String peerOf(SocketChannel channel) {
        try {
            return String.valueOf(channel.getRemoteAddress());
        } catch (IOException e) {
            return "a client";
        }
    }

    /** Stops accepting, closes every connection still in its handshake and waits, bounded, for the thread. */
    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        if (!thread.isAlive() && thread.getState() == Thread.State.NEW) {
            closeQuietly(listener);
            closeQuietly(selector);
            return;
        }
        try {
            if (!thread.join(JOIN_TIMEOUT)) {
                log.warn("TcpStore server: its acceptor did not stop within {}", JOIN_TIMEOUT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            log.trace("Ignoring failure to close {}: {}", closeable, e.toString());
        }
    }
}
