package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.RpcException;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * In-process transport (Netty's {@code LocalChannel}, grpc's in-process transport): workers of one
 * JVM connect through a JVM-wide directory of addresses ({@code local:<worker>/<n>}), without
 * sockets. Messages still go through {@link dev.ferry.rpc.internal.wire.FrameCodec} both ways, so
 * what arrives is a copy decoded from bytes, exactly as over TCP: a receiver never shares an
 * object with its sender, and size limits and malformed frames behave the same.
 *
 * <pre>
 *   sender's thread                          receiver's transport thread, one connection at a time
 *   send ─ encode (size checked) ─▶ queue ──▶ decode ─▶ listener.onMessage(connection, message)
 *   close ─────────────────────────▶ queue ──▶ (after what was sent before) listener.onClosed
 * </pre>
 *
 * <p>Flow control as over sockets: bytes an end has sent and its peer not yet taken in are counted
 * against {@code sendQueueBytes}; past that, a sender on an ordinary thread waits (bounded by
 * {@code sendQueueTimeout}) and a transport thread never does. A paused end
 * ({@link PeerChannel#pauseReading}) holds what arrives, so its sender soon waits.
 *
 * <p>Each connection end delivers its events in order on the receiving transport's threads, so the
 * listener contract (never block, per-connection order) is the same as {@link NettyTransport}'s.
 * Connecting to an address of another JVM fails: this transport only joins workers of one process.
 *
 * <p>This class is thread-safe.
 */
public final class LocalTransport implements Transport {
    private static final ConcurrentMap<String, LocalTransport> LISTENING = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong();

    private final String name;
    private final long maxFrameBytes;
    private final long sendQueueBytes;
    private final Duration sendQueueTimeout;
    private final ExecutorService threads;
    private final Set<Thread> ownThreads = ConcurrentHashMap.newKeySet();
    private final Set<LocalConnection> connections = ConcurrentHashMap.newKeySet();
    private final Object lifecycle = new Object();
    private volatile TransportListener listener;
    private volatile String address;
    private boolean closed; // guarded by lifecycle

    /**
     * @param name             the worker's name, part of the address so logs read well
     * @param ioThreads        how many threads deliver messages to the listener
     * @param maxFrameBytes    the largest message sent
     * @param sendQueueBytes   bytes one connection end may have sent and its peer not yet taken in
     *                         before senders wait (the peer paused reading, or is slow)
     * @param sendQueueTimeout how long a sender waits for room before its send fails (TIMEOUT)
     * @param threadFactory    makes the delivering threads
     */
    public LocalTransport(String name, int ioThreads, long maxFrameBytes, long sendQueueBytes,
                          Duration sendQueueTimeout, ThreadFactory threadFactory) {
        this.name = name;
        this.maxFrameBytes = maxFrameBytes;
        this.sendQueueBytes = sendQueueBytes;
        this.sendQueueTimeout = sendQueueTimeout;
        this.threads = Executors.newFixedThreadPool(ioThreads, task -> {
            Thread thread = threadFactory.newThread(task);
            ownThreads.add(thread);
            return thread;
        });
    }

    @Override
    public String start(TransportListener listener) {
        synchronized (lifecycle) {
            if (closed || address != null) {
                throw new RpcException(RpcException.Code.ILLEGAL_STATE, "transport " + name
                        + (closed ? " is closed" : " is already started"));
            }
            this.listener = listener;
            address = "local:" + name + "/" + NEXT_ID.incrementAndGet();
            LISTENING.put(address, this);
            return address;
        }
    }

    @Override
    public CompletableFuture<PeerChannel> connect(String address) {
        LocalTransport server = LISTENING.get(address);
        if (server == null) {
            return CompletableFuture.failedFuture(new RpcException(RpcException.Code.UNAVAILABLE, "cannot connect to "
                    + address + ": no worker of this JVM listens there (the in-process transport connects only"
                    + " workers of one JVM)"));
        }
        LocalConnection opened = new LocalConnection(this, address);
        LocalConnection accepted = new LocalConnection(server, String.valueOf(this.address));
        opened.pair(accepted);
        accepted.pair(opened);
        if (!adopt(opened)) {
            return CompletableFuture.failedFuture(new RpcException(RpcException.Code.UNAVAILABLE,
                    "transport " + this.address + " is closed"));
        }
        if (!server.adopt(accepted)) {
            connections.remove(opened);
            return CompletableFuture.failedFuture(new RpcException(RpcException.Code.UNAVAILABLE, "cannot connect to "
                    + address + ": it has closed"));
        }
        CompletableFuture<PeerChannel> result = new CompletableFuture<>();
        // Accepted before anything sent on it arrives: both go through the same ordered queue.
        accepted.deliver(() -> server.listener.onAccepted(accepted));
        // Completed on a transport thread, as Netty completes connects on its event loop.
        if (!opened.deliver(() -> result.complete(opened))) {
            result.completeExceptionally(new RpcException(RpcException.Code.UNAVAILABLE,
                    "transport " + this.address + " is closed"));
        }
        return result;
    }

    private boolean adopt(LocalConnection connection) {
        synchronized (lifecycle) {
            if (closed) {
                return false;
            }
            connections.add(connection);
            return true;
        }
    }

    void forget(LocalConnection connection) {
        connections.remove(connection);
    }

    TransportListener listener() {
        return listener;
    }

    long sendQueueBytes() {
        return sendQueueBytes;
    }

    Duration sendQueueTimeout() {
        return sendQueueTimeout;
    }

    /** Whether the calling thread delivers this transport's events (it must never wait). */
    boolean isOwnThread() {
        return ownThreads.contains(Thread.currentThread());
    }

    long maxFrameBytes() {
        return maxFrameBytes;
    }


    ExecutorService threads() {
        return threads;
    }

    @Override
    public String describe() {
        return "in-process";
    }

    @Override
    public void close() {
        List<LocalConnection> open;
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
            if (address != null) {
                LISTENING.remove(address, this);
            }
            open = List.copyOf(connections);
        }
        for (LocalConnection connection : open) {
            connection.close();
        }
        // Queued deliveries (the onClosed events just above among them) still run.
        threads.shutdown();
        if (!ownThreads.contains(Thread.currentThread())) {
            try {
                if (!threads.awaitTermination(10, TimeUnit.SECONDS)) {
                    threads.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                threads.shutdownNow();
            }
        }
    }

    @Override
    public String toString() {
        return "LocalTransport[" + (address != null ? address : name) + "]";
    }
}
