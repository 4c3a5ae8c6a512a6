package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.BlockingAuthExchange;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.store.StoreTimeoutException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One multiplexed connection to a {@link StoreServer}. Many threads may call at once: each request
 * gets an id, one writer thread sends the requests in order, and one reader thread hands each reply
 * to the caller waiting for that id. A thread parked in {@link #get} therefore never blocks a {@link #set}
 * from another thread on the same connection.
 *
 * <p>Blocking waits happen on the server (the request carries its timeout), so the client never
 * polls. The client waits a little longer than the server ({@link #SERVER_GRACE}) and only gives up
 * on its own if the server stops answering.
 *
 * <p>This class is thread-safe.
 */
public final class StoreClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreClient.class);
    static final Duration SERVER_GRACE = Duration.ofSeconds(2);
    private static final long MAX_CONNECT_BACKOFF_MILLIS = 1000;
    private static final int MAX_CONNECT_ATTEMPT_MILLIS = 5000;

    private final String target;
    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    /** Frames waiting for the writer thread; {@link #STOP_WRITER} ends it. */
    private final BlockingQueue<byte[]> outbox = new LinkedBlockingQueue<>();
    private final Map<Integer, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);
    private static final byte[] STOP_WRITER = new byte[0];
    private final ThreadTracker ioThreads = new ThreadTracker();
    /** Set once, when the connection ends; every later call fails with a copy of it. */
    private volatile RpcException terminal;
    private volatile boolean closed;

    private StoreClient(String target, Socket socket) throws IOException {
        this.target = target;
        this.socket = socket;
        this.out = new BufferedOutputStream(socket.getOutputStream());
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
    }

    /**
     * Connects to the server at {@code host:port}, retrying until {@code timeout} (ZERO: forever)
     * since in a rendezvous the server's process may start after its clients.
     *
     * @throws RpcException RENDEZVOUS_FAILED if no connection succeeds in time, PROTOCOL_ERROR if
     *     the peer is not a Ferry store server
     */
    public static StoreClient connect(String host, int port, Duration timeout) {
        return connect(host, port, timeout, null);
    }

    /**
     * As {@link #connect(String, int, Duration)}, proving {@code auth}'s token to the server and
     * checking the server's proof (null: no authentication).
     *
     * @throws RpcException UNAUTHENTICATED, at once, if the server and this client disagree on
     *     authentication or their tokens differ
     */
    public static StoreClient connect(String host, int port, Duration timeout, PeerAuthentication auth) {
        return connect(host, port, timeout, auth, null);
    }

    /**
     * As {@link #connect(String, int, Duration, PeerAuthentication)}, over TLS with {@code tls} (null:
     * plain TCP): this client presents the context's certificate and accepts only a server whose
     * certificate the context trusts.
     *
     * @throws RpcException UNAUTHENTICATED, at once, if the TLS handshake fails (a certificate not
     *     trusted by either side, or a server that does not speak TLS)
     */
    public static StoreClient connect(String host, int port, Duration timeout, PeerAuthentication auth,
                                      SSLContext tls) {
        String target = host + ":" + port;
        Deadline deadline = Deadline.after(timeout);
        long backoffMillis = 10;
        int attempts = 0;
        while (true) {
            attempts++;
            Socket socket = new Socket();
            try {
                int attemptMillis = (int) Math.min(MAX_CONNECT_ATTEMPT_MILLIS,
                        Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline.remainingNanos())));
                // Resolved per attempt: the server's DNS name may appear only once its host is up.
                socket.connect(new InetSocketAddress(host, port), attemptMillis);
                socket.setTcpNoDelay(true);
                if (tls != null) {
                    socket = handshakeTls(tls, socket, host, port, attemptMillis);
                }
                StoreClient client = new StoreClient(target, socket);
                client.handshake(attemptMillis, auth);
                client.ioThreads.start("ferry-store-client-read-" + target, client::readLoop);
                client.ioThreads.start("ferry-store-client-write-" + target, client::writeLoop);
                log.debug("Connected to TcpStore server {} after {} attempt(s)", target, attempts);
                return client;
            } catch (RpcException e) {
                closeQuietly(socket);
                throw e; // authentication: trying again cannot help
            } catch (SSLException e) {
                // Certificates do not change between attempts; and a TLS 1.3 server refusing ours
                // says so only at our first read, inside the HELLO exchange, which lands here too.
                closeQuietly(socket);
                throw new RpcException(Code.UNAUTHENTICATED, "TLS with the TcpStore server at " + target
                        + " failed: " + e.getMessage() + " (do both ends use TLS with certificates the other"
                        + " trusts? FERRY_TLS_KEYSTORE / RpcBackendOptions.tls)", e);
            } catch (ProtocolException e) {
                closeQuietly(socket);
                throw new RpcException(Code.PROTOCOL_ERROR,
                        "Peer at " + target + " is not a compatible Ferry TcpStore server: " + e.getMessage(), e);
            } catch (IOException e) {
                closeQuietly(socket);
                if (deadline.expired()) {
                    throw new RpcException(Code.RENDEZVOUS_FAILED, "Could not connect to TcpStore server at "
                            + target + " within " + timeout.toMillis() + " ms (" + attempts + " attempts): " + e, e);
                }
                log.debug("TcpStore server {} not reachable yet ({}), retrying", target, e.toString());
            }
            sleepBackoff(target, Math.min(backoffMillis, TimeUnit.NANOSECONDS.toMillis(deadline.remainingNanos())));
            backoffMillis = Math.min(backoffMillis * 2, MAX_CONNECT_BACKOFF_MILLIS);
        }
    }

    private static SSLSocket handshakeTls(SSLContext tls, Socket plain, String host, int port, int timeoutMillis)
            throws IOException {
        SSLSocket secure = (SSLSocket) tls.getSocketFactory().createSocket(plain, host, port, true);
        secure.setUseClientMode(true);
        secure.setSoTimeout(timeoutMillis);
        secure.startHandshake();
        secure.setSoTimeout(0);
        return secure;
    }

    private static void sleepBackoff(String target, long millis) {
        try {
            Thread.sleep(Math.max(1, millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while connecting to TcpStore server at " + target, e);
        }
    }

    private void handshake(int timeoutMillis, PeerAuthentication auth) throws IOException {
        out.write(FrameBuilder.start(0, StoreProtocol.OP_HELLO).putInt(StoreProtocol.MAGIC)
                .putShort(StoreProtocol.VERSION).toByteArray());
        out.flush();
        socket.setSoTimeout(timeoutMillis);
        Frame reply = Frame.read(in, StoreProtocol.MAX_FRAME_BYTES);
        socket.setSoTimeout(0);
        if (reply.type() == StoreProtocol.STATUS_ERROR) {
            String code = reply.body().readString();
            String message = reply.body().readString();
            if (Code.UNAUTHENTICATED.name().equals(code)) {
                throw new RpcException(Code.UNAUTHENTICATED, "the TcpStore server at " + target + " refused this worker: "
                        + message);
            }
            throw new ProtocolException(message);
        }
        if (reply.type() != StoreProtocol.STATUS_OK || reply.body().readShort() != StoreProtocol.VERSION) {
            throw new ProtocolException("unexpected handshake reply");
        }
        boolean serverAuthenticates = reply.body().readBoolean();
        if (serverAuthenticates && auth == null) {
            throw new RpcException(Code.UNAUTHENTICATED, "the TcpStore server at " + target
                    + " requires an authentication token and this worker has none (authToken / FERRY_AUTH_TOKEN)");
        }
        if (!serverAuthenticates && auth != null) {
            throw new RpcException(Code.UNAUTHENTICATED, "the TcpStore server at " + target
                    + " does not authenticate its clients, but this worker has an authentication token;"
                    + " refusing to join a store that anyone can write to");
        }
        if (auth != null) {
            socket.setSoTimeout(timeoutMillis);
            BlockingAuthExchange.run(in, out, auth, false, "the TcpStore server at " + target);
            socket.setSoTimeout(0);
        }
    }

    /** The {@code host:port} this client is connected to. */
    public String target() {
        return target;
    }

    /** Whether the connection is still usable: not closed and not lost. */
    public boolean isOpen() {
        return !closed && terminal == null;
    }

    /** I/O threads still running (reader and writer: 2 while open, 0 after close); for leak tests. */
    public int liveThreads() {
        return ioThreads.liveCount();
    }

    public void set(String key, byte[] value, Duration replyTimeout) {
        call(new StoreRequest.Set(key, value), replyTimeout);
    }

    public byte[] get(String key, Duration timeout) {
        Frame reply = awaitKeys(new StoreRequest.Get(key, StoreArguments.toWireMillis(timeout)), List.of(key), timeout);
        return read(reply, r -> r.readBytes());
    }

    public void waitFor(List<String> keys, Duration timeout) {
        awaitKeys(new StoreRequest.Wait(keys, StoreArguments.toWireMillis(timeout)), keys, timeout);
    }

    public long add(String key, long delta, Duration replyTimeout) {
        return read(call(new StoreRequest.Add(key, delta), replyTimeout), FrameReader::readLong);
    }

    public byte[] compareSet(String key, byte[] expected, byte[] desired, Duration replyTimeout) {
        return read(call(new StoreRequest.CompareSet(key, expected, desired), replyTimeout), FrameReader::readBytes);
    }

    public boolean check(List<String> keys, Duration replyTimeout) {
        return read(call(new StoreRequest.Check(keys), replyTimeout), FrameReader::readBoolean);
    }

    public boolean delete(String key, Duration replyTimeout) {
        return read(call(new StoreRequest.Delete(key), replyTimeout), FrameReader::readBoolean);
    }

    public long numKeys(Duration replyTimeout) {
        return read(call(new StoreRequest.NumKeys(), replyTimeout), FrameReader::readLong);
    }

    private Frame awaitKeys(StoreRequest request, List<String> keys, Duration timeout) {
        Duration clientWait = timeout.isZero() ? Duration.ZERO : timeout.plus(SERVER_GRACE);
        Frame reply = send(request, clientWait);
        if (reply == null) {
            // The server should have answered TIMEOUT by now; it is hung or the network is.
            log.warn("TcpStore server {} did not answer {} within {} ms", target, request.describe(),
                    clientWait.toMillis());
            throw new StoreTimeoutException(timeout, keys);
        }
        return checkStatus(reply, timeout);
    }

    private Frame call(StoreRequest request, Duration replyTimeout) {
        Frame reply = send(request, replyTimeout);
        if (reply == null) {
            throw new RpcException(Code.TIMEOUT, "TcpStore server " + target + " did not answer "
                    + request.describe() + " within " + replyTimeout.toMillis() + " ms");
        }
        return checkStatus(reply, replyTimeout);
    }

    /** Sends a request and waits for its reply; null if {@code wait} (ZERO: forever) runs out. */
    private Frame send(StoreRequest request, Duration wait) {
        if (Thread.currentThread().isInterrupted()) {
            throw new RpcException(Code.INTERNAL, "Interrupted before sending " + request.describe()
                    + " to TcpStore server " + target);
        }
        byte[] frame = request.encode(nextRequestId());
        int id = frameId(frame);
        CompletableFuture<Frame> reply = new CompletableFuture<>();
        pending.put(id, reply);
        // close() sets `terminal` before sweeping `pending`, so either it sees our entry or we see it.
        RpcException failure = closed ? closedError() : terminal;
        if (failure != null) {
            pending.remove(id);
            throw failure.rethrowable();
        }
        try {
            write(frame);
            return wait.isZero() ? reply.get() : reply.get(StoreArguments.toNanosSaturated(wait), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            cancelOnServer(request, id);
            return null;
        } catch (ExecutionException e) {
            throw ((RpcException) e.getCause()).rethrowable();
        } catch (InterruptedException e) {
            cancelOnServer(request, id);
            Thread.currentThread().interrupt();
            throw new RpcException(Code.INTERNAL, "Interrupted while waiting for TcpStore server " + target
                    + " to answer " + request.describe(), e);
        } finally {
            pending.remove(id);
        }
    }

    /** Releases the server's waiter for a GET/WAIT nobody waits for any more. */
    private void cancelOnServer(StoreRequest request, int id) {
        if (request.blocking() && terminal == null) {
            write(new StoreRequest.Cancel(id).encode(nextRequestId()));
        }
    }

    private int nextRequestId() {
        // Id 0 is the handshake's; skip it (and negatives) after wrap-around.
        int id = nextId.getAndIncrement() & Integer.MAX_VALUE;
        return id == 0 ? nextRequestId() : id;
    }

    private static int frameId(byte[] frame) {
        return ((frame[4] & 0xff) << 24) | ((frame[5] & 0xff) << 16) | ((frame[6] & 0xff) << 8) | (frame[7] & 0xff);
    }

    /**
     * Hands a frame to the writer thread. Callers never touch the socket themselves: an interrupted
     * virtual thread blocked in a socket write would close the socket, and with it every other
     * caller's pending request.
     */
    private void write(byte[] frame) {
        outbox.add(frame);
    }

    private void writeLoop() {
        try {
            while (true) {
                byte[] frame = outbox.take();
                if (frame == STOP_WRITER) {
                    return;
                }
                out.write(frame);
                // Flush only when nothing else is queued: a burst of requests shares one syscall.
                if (outbox.isEmpty()) {
                    out.flush();
                }
            }
        } catch (IOException e) {
            fail(new RpcException(Code.UNAVAILABLE, "Lost connection to TcpStore server " + target + ": " + e, e));
        } catch (InterruptedException e) {
            // Only close() stops the writer, and it does so with STOP_WRITER; nothing else interrupts it.
            Thread.currentThread().interrupt();
        }
    }

    private Frame checkStatus(Frame reply, Duration timeout) {
        try {
            return switch (reply.type()) {
                case StoreProtocol.STATUS_OK -> reply;
                case StoreProtocol.STATUS_TIMEOUT -> throw new StoreTimeoutException(timeout, reply.body().readStrings());
                case StoreProtocol.STATUS_ERROR -> throw remoteError(reply.body());
                default -> throw new ProtocolException("unknown reply status " + reply.type());
            };
        } catch (ProtocolException e) {
            throw protocolViolation(e);
        }
    }

    private RpcException remoteError(FrameReader body) throws ProtocolException {
        String codeName = body.readString();
        String message = body.readString();
        Code code;
        try {
            code = Code.valueOf(codeName);
        } catch (IllegalArgumentException e) {
            code = Code.INTERNAL;
        }
        return new RpcException(code, "TcpStore server " + target + ": " + message);
    }

    private interface BodyReader<T> {
        T read(FrameReader body) throws ProtocolException;
    }

    private <T> T read(Frame reply, BodyReader<T> reader) {
        try {
            T value = reader.read(reply.body());
            reply.body().expectEnd();
            return value;
        } catch (ProtocolException e) {
            throw protocolViolation(e);
        }
    }

    private RpcException protocolViolation(ProtocolException e) {
        RpcException error = new RpcException(Code.PROTOCOL_ERROR,
                "TcpStore server " + target + " sent a malformed reply: " + e.getMessage(), e);
        fail(error);
        return error;
    }

    private void readLoop() {
        try {
            while (terminal == null) {
                Frame reply = Frame.read(in, StoreProtocol.MAX_FRAME_BYTES);
                CompletableFuture<Frame> waiter = pending.get(reply.id());
                if (waiter != null) {
                    waiter.complete(reply);
                } else {
                    log.debug("Dropping late reply {} from TcpStore server {}", reply.id(), target);
                }
            }
        } catch (ProtocolException e) {
            protocolViolation(e);
        } catch (EOFException e) {
            fail(new RpcException(Code.UNAVAILABLE, "TcpStore server " + target + " closed the connection"));
        } catch (IOException e) {
            fail(new RpcException(Code.UNAVAILABLE, "Lost connection to TcpStore server " + target + ": " + e, e));
        }
    }

    /** Ends the connection with {@code error}: pending and later calls fail with it. First one wins. */
    private void fail(RpcException error) {
        synchronized (this) {
            if (terminal != null) {
                return;
            }
            terminal = error;
        }
        closeQuietly(socket);
        outbox.clear();
        outbox.add(STOP_WRITER);
        for (CompletableFuture<Frame> waiter : pending.values()) {
            waiter.completeExceptionally(error);
        }
    }

    /** Closes the connection; blocked calls fail with SHUTDOWN. Joins the reader thread. Idempotent. */
    @Override
    public void close() {
        // Flagged separately from `terminal`: after close() calls fail with SHUTDOWN even if the
        // connection had been lost earlier.
        closed = true;
        fail(closedError());
        try {
            if (!ioThreads.joinAll(Duration.ofSeconds(5))) {
                log.warn("TcpStore client {}: I/O threads did not stop", target);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private RpcException closedError() {
        return new RpcException(Code.SHUTDOWN, "TcpStore client for " + target + " is closed");
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            log.debug("Ignoring failure to close socket: {}", e.toString());
        }
    }
}
