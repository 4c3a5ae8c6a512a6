package dev.ferry.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * How the {@link BackendType#NETTY} transport moves bytes: which channels it may use between two
 * workers and how much memory and CPU it may spend on speed. None of it changes what a call does,
 * only how fast it goes; the defaults are what the benchmarks ({@code ferry-bench}) were measured
 * with, and a program needs none of these to be correct. Kept apart from {@link RpcBackendOptions}
 * (PyTorch's options, limits and security) as grpc-java keeps {@code NettyChannelBuilder} apart
 * from {@code CallOptions}. The in-process backend uses {@link #ioThreads}, the send queue and the
 * spin time and ignores the rest.
 *
 * <p>Immutable: each {@code with...} returns a copy.
 *
 * <pre>{@code
 * RpcBackendOptions options = RpcBackendOptions.builder()
 *         .transport(TransportTuning.defaults().withUnixSockets(false).withSyncLanes(0))  // TCP, no lanes
 *         .build();
 * }</pre>
 *
 * <table>
 *   <caption>Tuning and defaults</caption>
 *   <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>unixSockets</td><td>true</td><td>workers on the same host (same {@link #hostId}) talk over a Unix
 *       domain socket, with TCP as the fallback; false: TCP only (Linux epoll only)</td></tr>
 *   <tr><td>hostId</td><td>hostname/boot id</td><td>workers with equal host ids are taken to share a host</td></tr>
 *   <tr><td>sharedMemoryBytes</td><td>512 MiB</td><td>this worker's shared-memory segment for same-host peers
 *       (with {@code unixSockets}; 0: off): out-of-band buffers of 256 KiB or more are copied once into it and
 *       the peer reads them in place, one copy per direction instead of a socket's two. A sparse file in
 *       {@code /dev/shm} (mode 0600, deleted at shutdown); while it is full, buffers travel over the socket</td></tr>
 *   <tr><td>syncLanes</td><td>4</td><td>synchronous-exchange lanes this worker may open to each peer (0: none,
 *       and none accepted): a small {@code rpcSync} goes over an idle one, a socket of its own on which the
 *       calling thread writes the request and reads the answer itself; not with TLS</td></tr>
 *   <tr><td>directWrites</td><td>true</td><td>a thread sending a small message alone in its exchange writes it
 *       to the socket itself when nothing is queued ahead of it, instead of handing it to the event loop
 *       (plain native sockets only)</td></tr>
 *   <tr><td>spinTime</td><td>200 µs</td><td>after activity, how long a thread that waits for the next message
 *       (event loops, the warm request thread, lanes, callers in {@code RpcFuture.await}) polls, yielding,
 *       before it blocks; adapted to the traffic, never on a single CPU; 0: nothing spins</td></tr>
 *   <tr><td>receiveBufferPoolBytes</td><td>512 MiB</td><td>direct memory kept for receiving messages over 1 MiB
 *       and reused from message to message (fresh memory costs a page fault per page); 0: a fresh buffer per
 *       message</td></tr>
 *   <tr><td>memoryCollections</td><td>true</td><td>when received memory (pool or shared segment) runs short
 *       while applications still reference much of it, ask for a garbage collection, on a thread of its own,
 *       to find what they dropped (buffers not released with {@code ReceivedBuffers.release}); meanwhile
 *       fresh memory is used. False for large heaps where a full collection is costly</td></tr>
 *   <tr><td>ioThreads</td><td>min(2, cores)</td><td>transport event-loop threads</td></tr>
 *   <tr><td>sendQueueBytes</td><td>64 MiB</td><td>bytes queued per connection (beyond the socket's buffer)
 *       before a sending thread waits for the peer to read</td></tr>
 *   <tr><td>sendQueueTimeout</td><td>60 s</td><td>how long a send waits for room; then it fails with
 *       {@code TIMEOUT}. Transport threads never wait</td></tr>
 *   <tr><td>closeTimeout</td><td>10 s</td><td>how long closing a connection gracefully waits for what is queued
 *       to be written and for the peer to close its end; then it closes at once and what was not written fails
 *       with {@code TIMEOUT}. 0: at once</td></tr>
 * </table>
 */
public final class TransportTuning {
    /** Upper bound of {@link #withSyncLanes}. */
    public static final int MAX_SYNC_LANES = 64;
    private static final TransportTuning DEFAULTS = new TransportTuning(new Fields());

    private final boolean unixSockets;
    private final String hostId;
    private final long sharedMemoryBytes;
    private final int syncLanes;
    private final boolean directWrites;
    private final Duration spinTime;
    private final long receiveBufferPoolBytes;
    private final boolean memoryCollections;
    private final int ioThreads;
    private final long sendQueueBytes;
    private final Duration sendQueueTimeout;
    private final Duration closeTimeout;

    private TransportTuning(Fields f) {
        this.unixSockets = f.unixSockets;
        this.hostId = f.hostId;
        this.sharedMemoryBytes = f.sharedMemoryBytes;
        this.syncLanes = f.syncLanes;
        this.directWrites = f.directWrites;
        this.spinTime = f.spinTime;
        this.receiveBufferPoolBytes = f.receiveBufferPoolBytes;
        this.memoryCollections = f.memoryCollections;
        this.ioThreads = f.ioThreads;
        this.sendQueueBytes = f.sendQueueBytes;
        this.sendQueueTimeout = f.sendQueueTimeout;
        this.closeTimeout = f.closeTimeout;
    }

    /** The defaults of the table above. */
    public static TransportTuning defaults() {
        return DEFAULTS;
    }

    public boolean unixSockets() {
        return unixSockets;
    }

    /** This host's identity for choosing the same-host channel; null means computed (hostname/boot id). */
    public String hostId() {
        return hostId;
    }

    public long sharedMemoryBytes() {
        return sharedMemoryBytes;
    }

    public int syncLanes() {
        return syncLanes;
    }

    public boolean directWrites() {
        return directWrites;
    }

    public Duration spinTime() {
        return spinTime;
    }

    public long receiveBufferPoolBytes() {
        return receiveBufferPoolBytes;
    }

    public boolean memoryCollections() {
        return memoryCollections;
    }

    public int ioThreads() {
        return ioThreads;
    }

    public long sendQueueBytes() {
        return sendQueueBytes;
    }

    public Duration sendQueueTimeout() {
        return sendQueueTimeout;
    }

    public Duration closeTimeout() {
        return closeTimeout;
    }

    /** Whether to reach peers on this host over a Unix domain socket; false forces TCP. */
    public TransportTuning withUnixSockets(boolean value) {
        return copy(f -> f.unixSockets = value);
    }

    /** Overrides this host's identity (workers with equal ids use the same-host channels). */
    public TransportTuning withHostId(String value) {
        Objects.requireNonNull(value, "hostId");
        return copy(f -> f.hostId = value);
    }

    /** Size of the shared-memory segment for same-host peers (at most 2 GiB); 0 turns it off. */
    public TransportTuning withSharedMemoryBytes(long value) {
        if (value < 0 || value > (2L << 30)) {
            throw invalid("sharedMemoryBytes must be between 0 and 2 GiB, got " + value);
        }
        return copy(f -> f.sharedMemoryBytes = value);
    }

    /** Lanes this worker may open to each peer (0 to {@value #MAX_SYNC_LANES}; 0: off). */
    public TransportTuning withSyncLanes(int value) {
        if (value < 0 || value > MAX_SYNC_LANES) {
            throw invalid("syncLanes must be between 0 and " + MAX_SYNC_LANES + ", got " + value);
        }
        return copy(f -> f.syncLanes = value);
    }

    /** Whether senders may write small messages to the socket themselves. */
    public TransportTuning withDirectWrites(boolean value) {
        return copy(f -> f.directWrites = value);
    }

    /** How long waiting threads poll after activity before blocking; zero never spins. */
    public TransportTuning withSpinTime(Duration value) {
        requireNotNegative(value, "spinTime");
        return copy(f -> f.spinTime = value);
    }

    /** Direct memory kept for receiving messages over 1 MiB; 0 allocates a fresh buffer per message. */
    public TransportTuning withReceiveBufferPoolBytes(long value) {
        requireAtLeast(value, 0, "receiveBufferPoolBytes");
        return copy(f -> f.receiveBufferPoolBytes = value);
    }

    /** Whether received memory running short may ask for a garbage collection (see the table above). */
    public TransportTuning withMemoryCollections(boolean value) {
        return copy(f -> f.memoryCollections = value);
    }

    public TransportTuning withIoThreads(int value) {
        requireAtLeast(value, 1, "ioThreads");
        return copy(f -> f.ioThreads = value);
    }

    public TransportTuning withSendQueueBytes(long value) {
        requireAtLeast(value, 1, "sendQueueBytes");
        return copy(f -> f.sendQueueBytes = value);
    }

    public TransportTuning withSendQueueTimeout(Duration value) {
        requireNotNegative(value, "sendQueueTimeout");
        return copy(f -> f.sendQueueTimeout = value);
    }

    /** Bound of a graceful connection close; 0 closes at once (see the table above). */
    public TransportTuning withCloseTimeout(Duration value) {
        requireNotNegative(value, "closeTimeout");
        return copy(f -> f.closeTimeout = value);
    }

    @Override
    public String toString() {
        return "TransportTuning{unixSockets=" + unixSockets + ", sharedMemoryBytes=" + sharedMemoryBytes
                + ", syncLanes=" + syncLanes + ", directWrites=" + directWrites + ", spinTime=" + spinTime
                + ", receiveBufferPoolBytes=" + receiveBufferPoolBytes + ", ioThreads=" + ioThreads + "}";
    }

    private TransportTuning copy(java.util.function.Consumer<Fields> change) {
        Fields fields = new Fields(this);
        change.accept(fields);
        return new TransportTuning(fields);
    }

    private static void requireAtLeast(long value, long least, String what) {
        if (value < least) {
            throw invalid(what + " must be at least " + least + ", got " + value);
        }
    }

    private static void requireNotNegative(Duration value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isNegative()) {
            throw invalid(what + " must not be negative, got " + value);
        }
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }

    /** The values of one copy while it is made. */
    private static final class Fields {
        boolean unixSockets = true;
        String hostId;
        long sharedMemoryBytes = 512L << 20;
        int syncLanes = 4;
        boolean directWrites = true;
        // 200 us; not Duration.ofMillis(1).dividedBy(5), whose BigDecimal arithmetic initializes
        // BigDecimal: some 50 ms of a cold JVM's start, on every worker's first options.
        Duration spinTime = Duration.ofNanos(200_000);
        long receiveBufferPoolBytes = 512L << 20;
        boolean memoryCollections = true;
        int ioThreads = Math.min(2, Runtime.getRuntime().availableProcessors());
        long sendQueueBytes = 64L << 20;
        Duration sendQueueTimeout = RpcBackendOptions.DEFAULT_RPC_TIMEOUT;
        Duration closeTimeout = Duration.ofSeconds(10);

        Fields() {
        }

        Fields(TransportTuning t) {
            unixSockets = t.unixSockets;
            hostId = t.hostId;
            sharedMemoryBytes = t.sharedMemoryBytes;
            syncLanes = t.syncLanes;
            directWrites = t.directWrites;
            spinTime = t.spinTime;
            receiveBufferPoolBytes = t.receiveBufferPoolBytes;
            memoryCollections = t.memoryCollections;
            ioThreads = t.ioThreads;
            sendQueueBytes = t.sendQueueBytes;
            sendQueueTimeout = t.sendQueueTimeout;
            closeTimeout = t.closeTimeout;
        }
    }
}
