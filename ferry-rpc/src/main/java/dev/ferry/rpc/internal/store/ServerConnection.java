package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.observe.RateLimitedLog;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.security.StallDetector;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of one client connection: once its handshake is through, reads requests on its
 * own virtual thread, answers quick ones inline and hands each request that must wait for keys to
 * a waiter thread, so a parked GET never holds up the connection's other requests.
 *
 * <p>What a client costs is bounded by {@link ConnectionLimits}: its HELLO and, with a token, its
 * authentication are driven by the server's acceptor without a thread ({@link StoreAcceptor});
 * only a TLS client runs its handshakes here, {@link StoreHandshake}'s few bytes within the
 * handshake's deadline (run on the server's scheduler, so a client trickling a byte at a time
 * cannot stretch it). Afterwards a frame's memory grows as its bytes arrive, and a client in the
 * middle of a frame that makes too little progress is closed.
 *
 * <pre>
 *  socket ──▶ reader thread ──┬─ SET/ADD/CHECK/... ─▶ KeyValueTable ─▶ reply
 *                             └─ GET/WAIT (key missing) ─▶ waiter thread ─ await ─▶ reply
 * </pre>
 * Replies from the reader and the waiters share the socket under one write lock.
 *
 * <p>Any protocol violation closes this connection only. This class is thread-safe.
 */
final class ServerConnection {
    private static final Logger log = LoggerFactory.getLogger(ServerConnection.class);

    private final Socket socket;
    private final String peer;
    private final KeyValueTable table;
    private final ThreadTracker waiters;
    private final Consumer<ServerConnection> onClose;
    private final ReentrantLock writeLock = new ReentrantLock();
    /** The connection's output, TLS-wrapped once the client turned out to speak TLS; set before any reply. */
    private volatile OutputStream out;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final PeerAuthentication auth;
    /** The TLS clients must speak, with a certificate it trusts; null: plain TCP. */
    private final SSLContext tls;
    /** Parked GET/WAIT requests by id, so that CANCEL can find them. */
    private final Map<Integer, ParkedWait> parked = new ConcurrentHashMap<>();
    private final ConnectionLimits limits;
    private final ScheduledExecutorService scheduler;
    private final RateLimitedLog drops;
    /** Gives back the server's handshake slot when the handshake ends (idempotent). */
    private final Runnable handshakeSlot;
    private final AtomicBoolean handshakeOver = new AtomicBoolean();
    private volatile ScheduledFuture<?> watch;
    /** What the reader took from the client so far, and where its last frame ended (for the stall watch). */
    private volatile CountingInput received;
    private volatile long frameEnd;
    private volatile long frames;
    /** The stall watch's looks (the scheduler's thread only). */
    private final StallDetector stalls = new StallDetector();

    /**
     * @param auth          what the client must prove right after HELLO; null: nothing
     * @param tls           the TLS the client must speak (mutual); null: plain TCP
     * @param scheduler     runs the handshake deadline and the stall watch
     * @param handshakeSlot run when the handshake ends (the server also runs it when the reader's thread
     *                      ends, so a stranger's slot goes only with its thread)
     * @param drops         where connections dropped for what they sent are logged
     */
    ServerConnection(Socket socket, KeyValueTable table, ThreadTracker waiters,
                     Consumer<ServerConnection> onClose, PeerAuthentication auth, SSLContext tls,
                     ConnectionLimits limits, ScheduledExecutorService scheduler, Runnable handshakeSlot,
                     RateLimitedLog drops) {
        this.limits = limits;
        this.scheduler = scheduler;
        this.handshakeSlot = handshakeSlot;
        this.drops = drops;
        this.socket = socket;
        this.auth = auth;
        this.tls = tls;
        this.peer = String.valueOf(socket.getRemoteSocketAddress());
        this.table = table;
        this.waiters = waiters;
        this.onClose = onClose;
    }

    String peer() {
        return peer;
    }

    /**
     * The reader loop of a connection whose handshake the acceptor drove through; returns when the
     * peer disconnects, misbehaves or the connection is closed.
     */
    void serve() {
        run(() -> {
            handshakeOver.set(true);
            DataInputStream in = open(socket);
            startStallWatch();
            return in;
        });
    }

    /**
     * The reader loop of a connection that started TLS (its first byte taken by the acceptor): the TLS
     * handshake (a trusted client certificate required), then the store's, over TLS, both by
     * {@code deadlineNanos} ({@link System#nanoTime}) or the connection is closed, whatever trickles in.
     */
    void serveTls(long deadlineNanos) {
        run(() -> {
            watch = scheduler.schedule(this::handshakeExpired, deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (closed.get()) {
                throw new EOFException("closed before its handshake"); // nobody else cancels the deadline
            }
            InputStream consumed = new ByteArrayInputStream(new byte[] {StoreHandshake.TLS_HANDSHAKE_RECORD});
            SSLSocket secure = (SSLSocket) tls.getSocketFactory().createSocket(socket, consumed, true);
            secure.setNeedClientAuth(true);
            DataInputStream in = open(secure);
            handshake(in, new StoreHandshake(auth, false, peer));
            endHandshake();
            return in;
        });
    }

    private interface Opening {
        DataInputStream open() throws IOException, StoreHandshake.Refused;
    }

    private void run(Opening opening) {
        try (DataInputStream in = opening.open()) {
            while (!closed.get()) {
                Frame frame = Frame.read(in, StoreProtocol.MAX_FRAME_BYTES);
                frameEnd = received.position();
                frames++;
                dispatch(frame.id(), StoreRequest.decode(frame));
            }
        } catch (ProtocolException e) {
            drops.warn("Dropping store client {}: protocol violation: {}", peer, e.getMessage());
        } catch (StoreHandshake.Refused e) {
            drops.warn("Dropping store client {}: {}", peer, e.getMessage()); // failed authentication
        } catch (SSLException e) {
            drops.warn("Dropping store client {}: TLS: {}", peer, e.getMessage());
        } catch (EOFException e) {
            log.debug("Store client {} disconnected", peer);
        } catch (IOException e) {
            if (!closed.get()) {
                log.debug("Store client {} connection failed: {}", peer, e.toString());
            }
        } finally {
            close();
        }
    }

    /** The connection's streams: output for replies, input counted as the reader takes bytes (for the stall watch). */
    private DataInputStream open(Socket channel) throws IOException {
        out = new BufferedOutputStream(channel.getOutputStream());
        CountingInput counting = new CountingInput(new BufferedInputStream(channel.getInputStream()));
        received = counting;
        return new DataInputStream(counting);
    }

    /** Drives the store's handshake over blocking streams (TLS's): what it wants read, what it has to say. */
    private void handshake(DataInputStream in, StoreHandshake handshake) throws IOException, StoreHandshake.Refused {
        try {
            while (!handshake.done()) {
                flush(handshake.output());
                ByteBuffer wanted = handshake.input();
                in.readFully(wanted.array(), wanted.position(), wanted.remaining());
                wanted.position(wanted.limit());
                handshake.advance();
            }
        } finally {
            flush(handshake.output()); // the last answer, or why the client is refused
        }
    }

    private void flush(ByteBuffer bytes) throws IOException {
        if (bytes.hasRemaining()) {
            out.write(bytes.array(), bytes.position(), bytes.remaining());
            out.flush();
            bytes.position(bytes.limit());
        }
    }

    /** The handshake is through: its deadline and slot go, the stall watch starts. */
    private void endHandshake() {
        watch.cancel(false);
        releaseHandshakeSlot();
        startStallWatch();
    }

    private void startStallWatch() {
        long period = limits.stallTimeout().toNanos();
        frameEnd = received.position();
        watch = scheduler.scheduleAtFixedRate(this::lookForStall, period, period, TimeUnit.NANOSECONDS);
        if (closed.get()) {
            watch.cancel(false);
        }
    }

    private void releaseHandshakeSlot() {
        if (handshakeOver.compareAndSet(false, true)) {
            handshakeSlot.run();
        }
    }

    private void handshakeExpired() {
        if (!handshakeOver.get() && !closed.get()) {
            drops.warn("Dropping store client {}: no handshake within {} ms", peer, limits.handshakeTimeout().toMillis());
            close();
        }
    }

    /** Closes a client whose frame stalled ({@link StallDetector}): half a frame, or a byte at a time. */
    private void lookForStall() {
        long position = received.position();
        if (stalls.stalled(position, frames, position > frameEnd)) {
            drops.warn("Dropping store client {}: a frame stalled ({} bytes in {} ms)", peer, position - frameEnd,
                    limits.stallTimeout().toMillis());
            close();
        }
    }

    private void dispatch(int id, StoreRequest request) throws IOException {
        switch (request) {
            case StoreRequest.Get get -> awaitKeys(id, List.of(get.key()), get.timeoutMillis(), true);
            case StoreRequest.Wait wait -> awaitKeys(id, wait.keys(), wait.timeoutMillis(), false);
            case StoreRequest.Cancel cancel -> cancel(cancel.target());
            default -> reply(execute(id, request));
        }
    }

    private byte[] execute(int id, StoreRequest request) {
        try {
            return switch (request) {
                case StoreRequest.Set set -> {
                    table.set(set.key(), set.value());
                    yield ok(id).toByteArray();
                }
                case StoreRequest.Add add -> ok(id).putLong(table.add(add.key(), add.delta())).toByteArray();
                case StoreRequest.CompareSet cas ->
                        ok(id).putBytes(table.compareSet(cas.key(), cas.expected(), cas.desired())).toByteArray();
                case StoreRequest.Check check -> ok(id).putBoolean(table.containsAll(check.keys())).toByteArray();
                case StoreRequest.Delete delete -> ok(id).putBoolean(table.delete(delete.key())).toByteArray();
                case StoreRequest.NumKeys numKeys -> ok(id).putLong(table.size()).toByteArray();
                case StoreRequest.Get get -> throw new IllegalStateException("GET is dispatched to a waiter");
                case StoreRequest.Wait wait -> throw new IllegalStateException("WAIT is dispatched to a waiter");
                case StoreRequest.Cancel cancel -> throw new IllegalStateException("CANCEL has no reply");
            };
        } catch (RpcException e) {
            // A bad counter value is the caller's mistake, not a reason to drop the connection.
            return error(id, e.code(), e.getMessage());
        }
    }

    private void awaitKeys(int id, List<String> keys, long timeoutMillis, boolean returnValue) throws IOException {
        KeyValueTable.WaitResult now = table.peek(keys);
        if (now.satisfied()) {
            reply(satisfied(id, now, returnValue));
            return;
        }
        ParkedWait wait = new ParkedWait(id, keys, Duration.ofMillis(timeoutMillis), returnValue);
        parked.put(id, wait);
        waiters.start("ferry-store-wait-" + peer + "#" + id, wait);
    }

    private void cancel(int target) {
        ParkedWait wait = parked.get(target);
        if (wait != null) {
            wait.cancelled = true;
            table.wakeAll();
        }
    }

    /** A GET or WAIT parked until its keys appear, its deadline passes or the connection goes. */
    private final class ParkedWait implements Runnable {
        private final int id;
        private final List<String> keys;
        private final Duration timeout;
        private final boolean returnValue;
        private volatile boolean cancelled;

        ParkedWait(int id, List<String> keys, Duration timeout, boolean returnValue) {
            this.id = id;
            this.keys = keys;
            this.timeout = timeout;
            this.returnValue = returnValue;
        }

        @Override
        public void run() {
            try {
                awaitAndReply();
            } finally {
                parked.remove(id, this);
            }
        }

        private void awaitAndReply() {
            byte[] reply;
            try {
                KeyValueTable.WaitResult result = table.await(keys, Deadline.after(timeout),
                        () -> cancelled || closed.get());
                if (result.cancelled()) {
                    return;
                }
                reply = result.satisfied()
                        ? satisfied(id, result, returnValue)
                        : FrameBuilder.start(id, StoreProtocol.STATUS_TIMEOUT).putStrings(result.missingKeys())
                                .toByteArray();
            } catch (KeyValueTable.ClosedException e) {
                reply = error(id, Code.SHUTDOWN, "TcpStore server is shutting down");
            } catch (InterruptedException e) {
                return;
            }
            try {
                reply(reply);
            } catch (IOException e) {
                log.debug("Could not answer store client {}: {}", peer, e.toString());
                close();
            }
        }
    }

    private static byte[] satisfied(int id, KeyValueTable.WaitResult result, boolean returnValue) {
        FrameBuilder reply = ok(id);
        if (returnValue) {
            reply.putBytes(result.value());
        }
        return reply.toByteArray();
    }

    private static FrameBuilder ok(int id) {
        return FrameBuilder.start(id, StoreProtocol.STATUS_OK);
    }

    private static byte[] error(int id, Code code, String message) {
        return FrameBuilder.start(id, StoreProtocol.STATUS_ERROR).putString(code.name()).putString(message)
                .toByteArray();
    }

    private void reply(byte[] frame) throws IOException {
        writeLock.lock();
        try {
            if (closed.get()) {
                throw new SocketException("connection to " + peer + " already closed");
            }
            out.write(frame);
            out.flush();
        } finally {
            writeLock.unlock();
        }
    }

    /** Closes the socket and releases this connection's parked waits. Idempotent. */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ScheduledFuture<?> pending = watch;
        if (pending != null) {
            pending.cancel(false);
        }
        try {
            socket.close();
        } catch (IOException e) {
            log.debug("Closing store client socket {}: {}", peer, e.toString());
        }
        table.wakeAll();
        onClose.accept(this);
    }

    /** Counts the bytes taken through it; written by the reader thread, read by the stall watch. */
    private static final class CountingInput extends FilterInputStream {
        private volatile long position;

        CountingInput(InputStream in) {
            super(in);
        }

        long position() {
            return position;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                position++;
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                position += n;
            }
            return n;
        }
    }
}
