package dev.ferry.rpc;

import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.SerializationExtension;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * Options of the built-in backends, {@link BackendType#NETTY} and {@link BackendType#IN_PROCESS}
 * (PyTorch's {@code TensorPipeRpcBackendOptions}; {@link BackendOptions} is PyTorch's base
 * {@code RpcBackendOptions}). Immutable; build with {@link #builder()} or derive with
 * {@link #toBuilder()}. The in-process backend ignores {@code listenHost}.
 *
 * <pre>{@code
 * RpcBackendOptions options = RpcBackendOptions.builder()
 *         .initMethod("tcp://127.0.0.1:29500")
 *         .rpcTimeout(Duration.ofSeconds(30))
 *         .numWorkerThreads(32)
 *         .build();
 * }</pre>
 *
 * <table>
 *   <caption>Options and defaults</caption>
 *   <tr><th>option</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>initMethod</td><td>{@code env://}</td><td>how workers rendezvous: {@code env://},
 *       {@code tcp://host:port} or {@code file:///path}</td></tr>
 *   <tr><td>rpcTimeout</td><td>60 s</td><td>default timeout of calls; {@link Duration#ZERO}: none</td></tr>
 *   <tr><td>rendezvousTimeout</td><td>the rpcTimeout</td><td>how long {@code initRpc} waits for all ranks</td></tr>
 *   <tr><td>numWorkerThreads</td><td>16</td><td>how many requests may run at once on this worker; a request
 *       waiting on an RPC future does not count, so nested calls never deadlock</td></tr>
 *   <tr><td>listenHost</td><td>{@code FERRY_SOCKET_HOST} or 127.0.0.1</td><td>the address this worker listens on
 *       and advertises to the others</td></tr>
 *   <tr><td>ioThreads</td><td>min(2, cores)</td><td>transport event-loop threads</td></tr>
 *   <tr><td>maxMessageBytes</td><td>1 GiB</td><td>largest message sent or accepted</td></tr>
 *   <tr><td>outOfBandThreshold</td><td>64 KiB</td><td>binary buffers this large travel outside the object stream</td></tr>
 *   <tr><td>allowedClassPrefixes</td><td>none (all but known-dangerous)</td><td>classes a peer may make this worker
 *       instantiate</td></tr>
 *   <tr><td>allowedFunctionPrefixes</td><td>none (all but the JDK's)</td><td>classes whose methods a peer may call</td></tr>
 *   <tr><td>deviceMaps</td><td>empty</td><td>per destination worker, which local device maps to which of
 *       its devices ({@link Builder#setDeviceMap}); checked one-to-one when set and against the group at
 *       initialization</td></tr>
 *   <tr><td>devices</td><td>empty</td><td>the devices this worker uses ({@link Builder#setDevices})</td></tr>
 *   <tr><td>unixSockets</td><td>true ({@code FERRY_UNIX_SOCKETS=0}: false)</td><td>when true, workers on the same
 *       host (same hostname and boot id) talk over a Unix domain socket, chosen automatically, with TCP as the
 *       fallback; false uses TCP only (Netty backend, Linux epoll only)</td></tr>
 *   <tr><td>hostId</td><td>hostname/boot id</td><td>workers with equal host ids are taken to share a host</td></tr>
 *   <tr><td>sendQueueBytes</td><td>64 MiB</td><td>bytes queued per connection (beyond the socket's buffer)
 *       before a sending thread waits for the peer to read</td></tr>
 *   <tr><td>sendQueueTimeout</td><td>60 s</td><td>how long a send waits for room; then it fails with
 *       {@code TIMEOUT}. Transport threads never wait</td></tr>
 *   <tr><td>closeTimeout</td><td>10 s</td><td>how long closing a connection gracefully (shutdown, a peer
 *       that leaves) waits for what is queued to be written and for the peer to close its end; then the
 *       connection is closed at once and what was not written fails with {@code TIMEOUT}. 0: at once</td></tr>
 *   <tr><td>maxQueuedRequests</td><td>1024</td><td>requests received and not yet started (waiting for one of the
 *       {@code numWorkerThreads}) above which this worker stops reading from the connection that brought the last
 *       one (resumes below half)</td></tr>
 *   <tr><td>maxQueuedRequestBytes</td><td>256 MiB</td><td>the same limit counted in payload bytes</td></tr>
 *   <tr><td>spinTime</td><td>200 µs ({@code FERRY_SPIN_MICROS}; 0: off)</td><td>after activity, how long a
 *       transport thread at most polls (yielding) before it blocks, so a request or reply due soon is read
 *       without waking a halted CPU (~50–100 µs on a VM). The window adapts: it shrinks while windows pass
 *       with nothing and grows back when traffic comes within it. Idle agents still block, using no CPU;
 *       nothing spins on a single CPU. The same window keeps the worker's one warm request thread awake
 *       between requests (it runs a request when free, so the next one starts without waking a carrier;
 *       zero: every request runs on a new virtual thread). Callers waiting in {@code RpcFuture.await} spin
 *       the same way, for at most {@code FERRY_AWAIT_SPIN_MICROS} (default 200 µs, 0: off)</td></tr>
 *   <tr><td>receiveBufferPoolBytes</td><td>512 MiB ({@code FERRY_RECEIVE_POOL_MIB})</td><td>direct memory kept
 *       for receiving messages over 1 MiB and reused from message to message (fresh memory costs the kernel a
 *       page fault and zeroing per page: a fresh 128 MiB buffer took longer than sending it). Allocated only as
 *       large messages arrive; 0: no pool, a fresh buffer per message. A {@code ByteBuffer} argument or result
 *       of 64 KiB or more is received as a direct buffer viewing this memory, and its block is reused once
 *       the application no longer references the buffer (found by the garbage collector), or at once when
 *       the application releases it ({@link ReceivedBuffers}, which spares those collections). When no free
 *       memory fits and a third of the pool (at least 64 MiB) or more is lent (or the pool is full), the
 *       transport calls {@link System#gc()} rather than touch fresh memory (at most every 5 ms, less often while
 *       collections return nothing; the JDK does the same when direct memory runs out; {@code FERRY_RECEIVE_POOL_GC=0} turns that off, for large
 *       heaps where a full collection is costly); past the limit it uses a fresh buffer per message</td></tr>
 *   <tr><td>syncLanes</td><td>4 ({@code FERRY_SYNC_LANES}; {@code false}: 0)</td><td>synchronous-exchange
 *       lanes a worker may open to each peer: an {@code rpcSync} without RRef arguments or call context (up to
 *       16 KiB) goes over an idle one, a socket apart from the connection on which the calling thread writes the
 *       request and reads the answer itself while a thread of the callee dedicated to that lane runs it (it may
 *       block and make nested calls like any request thread). No event loop and no hand-off on either side: a
 *       small synchronous call costs about what a ping-pong over the socket costs. A caller that finds every lane
 *       busy uses the connection and a further lane opens in the background (up to this many); answers a lane
 *       cannot carry (RRefs, over 256 KiB) come over the connection. Unix socket for same-host peers, else TCP;
 *       authenticated like connections; not with {@code tls}. 0: off (this worker neither opens nor accepts
 *       lanes). Debug info: {@code transport.lanes.*}</td></tr>
 *   <tr><td>sharedMemoryBytes</td><td>512 MiB ({@code FERRY_SHM_MIB}; {@code FERRY_SHM=0}: 0)</td><td>size of
 *       this worker's shared-memory segment for same-host peers (with {@code unixSockets}; 0: off). Out-of-band
 *       buffers of 256 KiB or more to a peer on this host are copied once into it and the peer reads them in
 *       place: the receiver's {@code ByteBuffer} is a view of the sender's segment, one copy per direction
 *       instead of a socket's two (TensorPipe's shm transport; debug info shows {@code uds+shm} per peer and
 *       {@code transport.shm.*} counters). The segment is a sparse file in {@code /dev/shm} (mode 0600, deleted
 *       at shutdown) that costs memory only as far as it is used. A range comes back when the receiving
 *       application no longer references its view (found by the garbage collector; when a peer's views hold
 *       over half of its segment, or the sender would otherwise touch fresh memory while 64 MiB or more are
 *       lent, the receiver asks for a collection, as for {@code receiveBufferPoolBytes}, and
 *       {@code FERRY_RECEIVE_POOL_GC=0} turns that off too);
 *       while the segment is full, buffers travel over the socket. Negotiated per connection at connect time;
 *       anything that fails falls back to the socket</td></tr>
 *   <tr><td>authToken</td><td>{@code FERRY_AUTH_TOKEN}, else none</td><td>a secret shared by the group (at least
 *       16 characters): every connection, TCP or Unix socket, starts with both ends proving they hold
 *       it (a challenge-response over fresh nonces with HMAC-SHA256; the token never crosses the wire) before
 *       either reads anything else. A peer without it, with another, or anything else that connects is dropped
 *       and the calls that needed it fail with {@link RpcException.Code#UNAUTHENTICATED}; the rest of the group
 *       is unaffected. Authenticates, does not encrypt (see {@code tls}). {@code ferry run} gives its workers a
 *       fresh one unless the environment has one. A {@code tcp://} or {@code env://} rendezvous store is
 *       authenticated the same way (rank 0's server and every client)</td></tr>
 *   <tr><td>authTimeout</td><td>10 s</td><td>how long a connection may take to authenticate before it is
 *       closed</td></tr>
 *   <tr><td>tls</td><td>from {@code FERRY_TLS_KEYSTORE}, else none</td><td>an {@link SSLContext} with this worker's
 *       key and the certificates it trusts ({@link TlsContexts}): every TCP connection and every
 *       connection to a {@code tcp://} or {@code env://} rendezvous store (rank 0's server and its clients) is then
 *       TLS with both ends presenting a certificate the other must trust (mutual TLS; host names are checked only with
 *       {@code tlsVerifyHostnames}, and not on store connections), so
 *       traffic between hosts is encrypted and only holders of a trusted key get in; a failed handshake fails with
 *       {@link RpcException.Code#UNAUTHENTICATED}. Unix-socket connections stay in the clear (same host, a
 *       directory only this user can enter). From the environment: {@code FERRY_TLS_KEYSTORE} (PKCS12 or JKS),
 *       {@code FERRY_TLS_KEYSTORE_PASSWORD}, {@code FERRY_TLS_TRUSTSTORE} (default: the key store) and
 *       {@code FERRY_TLS_TRUSTSTORE_PASSWORD}. Costs the encryption (a large message is copied through it; TCP
 *       reads no longer land straight in messages)</td></tr>
 *   <tr><td>tlsVerifyHostnames</td><td>{@code FERRY_TLS_VERIFY_HOSTNAMES=1}, else off</td><td>with {@code tls}, the
 *       worker that opens a connection also checks that the certificate the other end presents names the host it
 *       dialed (the address the peer registered: an IP address or a DNS name; HTTPS's rules, RFC 2818), so that a
 *       holder of another trusted certificate (one CA for many services) cannot stand in for a worker. The accepting
 *       end checks the chain only, as an HTTPS server does. A mismatch fails the connection with
 *       {@link RpcException.Code#UNAUTHENTICATED}</td></tr>
 *   <tr><td>jmx</td><td>{@code FERRY_JMX} ({@code 1}: always, {@code 0}: never), else
 *       {@link JmxRegistration#IF_RUNNING}</td><td>when the agent shows its debug info as the JMX MBean
 *       {@code dev.ferry.rpc:type=RpcAgent,name="<worker>"}: by default only where the JVM already runs its platform
 *       MBean server ({@code -Dcom.sun.management.jmxremote}, a monitoring agent, the application), since starting
 *       it costs an idle worker CPU right after init; {@code ALWAYS} starts it (for JConsole attaching later)</td></tr>
 * </table>
 *
 * <p>Large binary data: a {@code ByteBuffer} (heap or direct) of at least 32 KiB that travels out of
 * band is written to the socket from its own memory, not copied; do not change its contents until the
 * call's future completes (for a result: until it has been sent). Primitive arrays ({@code float[]}
 * ...) are copied once into direct memory on the way out and once out of the received buffer. So the
 * fastest form for large tensors is a direct {@code ByteBuffer}. Between workers on one host (shared
 * memory, see {@code sharedMemoryBytes}) buffers of 256 KiB or more are copied once into shared memory
 * instead, and a received {@code ByteBuffer} is a view of the sender's segment: holding it keeps that
 * range from being reused (the sender falls back to the socket when its segment is full).
 *
 * <p>Backpressure: a worker that stops reading stops reading <em>everything</em> on that
 * connection, answers to its own calls and nested calls included, but only while requests wait to
 * start: a request leaves the count when it starts, and a handler that blocks on a nested call
 * gives its thread back, so the queue drains and reading resumes whatever the calls wait for.
 * Nested calls never deadlock at any queue limit. A handler that blocks on something other than a
 * Ferry future (a lock, a latch, {@code CompletableFuture.join()}) keeps its thread meanwhile.
 *
 * <p>Ferry's tensors are CPU-only: {@code "cpu"} is the only device, so the only device map is
 * {@code {"cpu": "cpu"}}. Any other device ({@code "cuda:0"}, {@code "0"}) is rejected with
 * {@link RpcException.Code#INVALID_ARGUMENT} instead of being ignored.
 */
public final class RpcBackendOptions implements BackendOptions {
    /** Default call timeout, as PyTorch's. */
    public static final Duration DEFAULT_RPC_TIMEOUT = Duration.ofSeconds(60);
    public static final int DEFAULT_NUM_WORKER_THREADS = 16;
    /** Upper bound of {@link Builder#syncLanes}. */
    public static final int MAX_SYNC_LANES = 64;

    private final String initMethod;
    private final Duration rpcTimeout;
    private final Duration rendezvousTimeout;
    private final int numWorkerThreads;
    private final String listenHost;
    private final int ioThreads;
    private final long maxMessageBytes;
    private final int outOfBandThreshold;
    private final List<String> allowedClassPrefixes;
    private final List<String> allowedFunctionPrefixes;
    private final List<CallInterceptor> interceptors;
    private final List<SerializationExtension> serializationExtensions;
    private final Map<String, Map<String, String>> deviceMaps;
    private final List<String> devices;
    private final boolean unixSockets;
    private final String hostId;
    private final long sendQueueBytes;
    private final Duration sendQueueTimeout;
    private final Duration closeTimeout;
    private final int maxQueuedRequests;
    private final long maxQueuedRequestBytes;
    private final Duration spinTime;
    private final long receiveBufferPoolBytes;
    private final int syncLanes;
    private final long sharedMemoryBytes;
    private final String authToken;
    private final Duration authTimeout;
    private final SSLContext tls;
    private final boolean tlsVerifyHostnames;
    private final JmxRegistration jmx;

    private RpcBackendOptions(Builder b) {
        if (b.authToken != null) {
            PeerAuthentication.of(b.authToken, b.authTimeout); // the same checks the transport makes, at build time
        }
        this.authToken = b.authToken;
        this.authTimeout = b.authTimeout;
        this.tls = b.tls != null ? b.tls : b.tlsFromEnvironment ? tlsFromEnvironment() : null;
        this.tlsVerifyHostnames = b.tlsVerifyHostnames;
        this.jmx = b.jmx;
        this.syncLanes = b.syncLanes;
        this.spinTime = b.spinTime;
        this.receiveBufferPoolBytes = b.receiveBufferPoolBytes;
        this.sharedMemoryBytes = b.sharedMemoryBytes;
        this.unixSockets = b.unixSockets;
        this.hostId = b.hostId;
        this.sendQueueBytes = b.sendQueueBytes;
        this.sendQueueTimeout = b.sendQueueTimeout;
        this.closeTimeout = b.closeTimeout;
        this.maxQueuedRequests = b.maxQueuedRequests;
        this.maxQueuedRequestBytes = b.maxQueuedRequestBytes;
        this.initMethod = b.initMethod;
        this.rpcTimeout = b.rpcTimeout;
        this.rendezvousTimeout = b.rendezvousTimeout;
        this.numWorkerThreads = b.numWorkerThreads;
        this.listenHost = b.listenHost;
        this.ioThreads = b.ioThreads;
        this.maxMessageBytes = b.maxMessageBytes;
        this.outOfBandThreshold = b.outOfBandThreshold;
        this.allowedClassPrefixes = List.copyOf(b.allowedClassPrefixes);
        this.allowedFunctionPrefixes = List.copyOf(b.allowedFunctionPrefixes);
        this.interceptors = List.copyOf(b.interceptors);
        this.serializationExtensions = List.copyOf(b.serializationExtensions);
        Map<String, Map<String, String>> maps = new LinkedHashMap<>();
        b.deviceMaps.forEach((to, map) -> maps.put(to, Collections.unmodifiableMap(new LinkedHashMap<>(map))));
        this.deviceMaps = Collections.unmodifiableMap(maps);
        this.devices = b.devices;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The default options. */
    public static RpcBackendOptions defaults() {
        return builder().build();
    }

    public Builder toBuilder() {
        return new Builder(this);
    }

    @Override
    public String initMethod() {
        return initMethod;
    }

    @Override
    public Duration rpcTimeout() {
        return rpcTimeout;
    }

    /** How long rendezvous waits for all ranks: the explicit value, else the rpcTimeout. */
    @Override
    public Duration rendezvousTimeout() {
        return rendezvousTimeout != null ? rendezvousTimeout : rpcTimeout;
    }

    public int numWorkerThreads() {
        return numWorkerThreads;
    }

    public String listenHost() {
        return listenHost;
    }

    public int ioThreads() {
        return ioThreads;
    }

    public long maxMessageBytes() {
        return maxMessageBytes;
    }

    public int outOfBandThreshold() {
        return outOfBandThreshold;
    }

    public List<String> allowedClassPrefixes() {
        return allowedClassPrefixes;
    }

    public List<String> allowedFunctionPrefixes() {
        return allowedFunctionPrefixes;
    }

    public List<CallInterceptor> interceptors() {
        return interceptors;
    }

    public List<SerializationExtension> serializationExtensions() {
        return serializationExtensions;
    }

    /** Per destination worker name, which local device maps to which device there. Unmodifiable. */
    public Map<String, Map<String, String>> deviceMaps() {
        return deviceMaps;
    }

    /** The devices this worker uses; empty means all (which in Ferry is the CPU). */
    public List<String> devices() {
        return devices;
    }

    /** Whether peers on this host are reached over a Unix domain socket (else TCP). */
    public boolean unixSockets() {
        return unixSockets;
    }

    /** This host's identity for choosing the same-host channel; null means computed (hostname/boot id). */
    public String hostId() {
        return hostId;
    }

    public long sendQueueBytes() {
        return sendQueueBytes;
    }

    public Duration sendQueueTimeout() {
        return sendQueueTimeout;
    }

    /** Bound of a graceful connection close (see the table above). */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    public int maxQueuedRequests() {
        return maxQueuedRequests;
    }

    public long maxQueuedRequestBytes() {
        return maxQueuedRequestBytes;
    }

    /** How long transport threads poll after activity before blocking. */
    public Duration spinTime() {
        return spinTime;
    }

    /** Direct memory kept for receiving large messages, reused (0: none). */
    public long receiveBufferPoolBytes() {
        return receiveBufferPoolBytes;
    }

    /** TCP connections per pair of workers large messages are spread over (1: the main connection only). */
    /** Synchronous-exchange lanes this worker may open to each peer (0: none, and it accepts none). */
    public int syncLanes() {
        return syncLanes;
    }

    /** Size of the shared-memory segment for same-host peers; 0: no shared memory. */
    public long sharedMemoryBytes() {
        return sharedMemoryBytes;
    }

    /** The group's authentication token; null when connections are not authenticated. Never logged. */
    public String authToken() {
        return authToken;
    }

    /** How long a connection may take to authenticate. */
    public Duration authTimeout() {
        return authTimeout;
    }

    /** TLS for TCP connections; null when they are not encrypted. */
    public SSLContext tls() {
        return tls;
    }

    /** Whether the opening end of a TLS connection checks that the peer's certificate names the host it dialed. */
    public boolean tlsVerifyHostnames() {
        return tlsVerifyHostnames;
    }

    /** When the agent registers its debug info as a JMX MBean. */
    public JmxRegistration jmx() {
        return jmx;
    }

    /** The context {@code FERRY_TLS_*} describe, or null without {@code FERRY_TLS_KEYSTORE}. */
    private static SSLContext tlsFromEnvironment() {
        String keyStore = System.getenv("FERRY_TLS_KEYSTORE");
        if (keyStore == null || keyStore.isBlank()) {
            return null;
        }
        char[] password = System.getenv().getOrDefault("FERRY_TLS_KEYSTORE_PASSWORD", "").toCharArray();
        String trustStore = System.getenv("FERRY_TLS_TRUSTSTORE");
        boolean sameStore = trustStore == null || trustStore.isBlank();
        return TlsContexts.fromKeyStores(Path.of(keyStore), password, sameStore ? Path.of(keyStore) : Path.of(trustStore),
                sameStore ? password : System.getenv().getOrDefault("FERRY_TLS_TRUSTSTORE_PASSWORD", "").toCharArray());
    }

    @Override
    public String toString() {
        return "RpcBackendOptions{initMethod=" + initMethod + ", rpcTimeout=" + rpcTimeout
                + ", numWorkerThreads=" + numWorkerThreads + ", listenHost=" + listenHost + "}";
    }

    /** Builds {@link RpcBackendOptions}. Not thread-safe. */
    public static final class Builder {
        private String initMethod = "env://";
        private Duration rpcTimeout = DEFAULT_RPC_TIMEOUT;
        private Duration rendezvousTimeout;
        private int numWorkerThreads = DEFAULT_NUM_WORKER_THREADS;
        private String listenHost = defaultListenHost();
        private int ioThreads = Math.min(2, Runtime.getRuntime().availableProcessors());
        private long maxMessageBytes = 1L << 30;
        private int outOfBandThreshold = 64 * 1024;
        private final List<String> allowedClassPrefixes = new ArrayList<>();
        private final List<String> allowedFunctionPrefixes = new ArrayList<>();
        private final List<CallInterceptor> interceptors = new ArrayList<>();
        private final List<SerializationExtension> serializationExtensions = new ArrayList<>();
        private final Map<String, Map<String, String>> deviceMaps = new LinkedHashMap<>();
        private List<String> devices = List.of();
        private boolean unixSockets = !"0".equals(System.getenv("FERRY_UNIX_SOCKETS"))
                && !"false".equalsIgnoreCase(System.getenv("FERRY_UNIX_SOCKETS"));
        private Duration spinTime = Duration.ofNanos(1000L * envInt("FERRY_SPIN_MICROS", 200));
        private String hostId;
        private long sendQueueBytes = 64L << 20;
        private Duration sendQueueTimeout = DEFAULT_RPC_TIMEOUT;
        private Duration closeTimeout = Duration.ofSeconds(10);
        private int maxQueuedRequests = 1024;
        private long maxQueuedRequestBytes = 256L << 20;
        private long receiveBufferPoolBytes = (long) envInt("FERRY_RECEIVE_POOL_MIB", 512) << 20;
        private int syncLanes = "false".equalsIgnoreCase(System.getenv("FERRY_SYNC_LANES")) ? 0
                : Math.max(0, Math.min(MAX_SYNC_LANES, envInt("FERRY_SYNC_LANES", 4)));
        private long sharedMemoryBytes = "0".equals(System.getenv("FERRY_SHM"))
                || "false".equalsIgnoreCase(System.getenv("FERRY_SHM")) ? 0
                : (long) Math.max(0, envInt("FERRY_SHM_MIB", 512)) << 20;
        private String authToken = blankToNull(System.getenv("FERRY_AUTH_TOKEN"));
        private Duration authTimeout = PeerAuthentication.DEFAULT_TIMEOUT;
        private SSLContext tls;
        /** Whether {@code FERRY_TLS_*} apply: until {@link #tls} is called. */
        private boolean tlsFromEnvironment = true;
        private boolean tlsVerifyHostnames = "1".equals(System.getenv("FERRY_TLS_VERIFY_HOSTNAMES"))
                || "true".equalsIgnoreCase(System.getenv("FERRY_TLS_VERIFY_HOSTNAMES"));
        private JmxRegistration jmx = JmxRegistration.fromEnvironment(System.getenv("FERRY_JMX"));

        private Builder() {
        }

        private Builder(RpcBackendOptions o) {
            initMethod = o.initMethod;
            rpcTimeout = o.rpcTimeout;
            rendezvousTimeout = o.rendezvousTimeout;
            numWorkerThreads = o.numWorkerThreads;
            listenHost = o.listenHost;
            ioThreads = o.ioThreads;
            maxMessageBytes = o.maxMessageBytes;
            outOfBandThreshold = o.outOfBandThreshold;
            allowedClassPrefixes.addAll(o.allowedClassPrefixes);
            allowedFunctionPrefixes.addAll(o.allowedFunctionPrefixes);
            interceptors.addAll(o.interceptors);
            serializationExtensions.addAll(o.serializationExtensions);
            deviceMaps.putAll(o.deviceMaps);
            devices = o.devices;
            unixSockets = o.unixSockets;
            hostId = o.hostId;
            sendQueueBytes = o.sendQueueBytes;
            sendQueueTimeout = o.sendQueueTimeout;
            closeTimeout = o.closeTimeout;
            maxQueuedRequests = o.maxQueuedRequests;
            maxQueuedRequestBytes = o.maxQueuedRequestBytes;
            spinTime = o.spinTime;
            receiveBufferPoolBytes = o.receiveBufferPoolBytes;
            syncLanes = o.syncLanes;
            sharedMemoryBytes = o.sharedMemoryBytes;
            authToken = o.authToken;
            authTimeout = o.authTimeout;
            tls = o.tls;
            tlsFromEnvironment = false;
            tlsVerifyHostnames = o.tlsVerifyHostnames;
            jmx = o.jmx;
        }

        private static String blankToNull(String value) {
            return value == null || value.isBlank() ? null : value;
        }

        private static int envInt(String name, int fallback) {
            String value = System.getenv(name);
            try {
                return value == null || value.isBlank() ? fallback : Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                return fallback;
            }
        }

        /** After activity, how long transport threads poll before blocking; zero never spins. */
        public Builder spinTime(Duration value) {
            this.spinTime = requireNotNegative(value, "spinTime");
            return this;
        }

        private static String defaultListenHost() {
            String host = System.getenv("FERRY_SOCKET_HOST");
            return host == null || host.isBlank() ? "127.0.0.1" : host;
        }

        public Builder initMethod(String value) {
            this.initMethod = Objects.requireNonNull(value, "initMethod");
            return this;
        }

        public Builder rpcTimeout(Duration value) {
            this.rpcTimeout = requireNotNegative(value, "rpcTimeout");
            return this;
        }

        public Builder rendezvousTimeout(Duration value) {
            this.rendezvousTimeout = requireNotNegative(value, "rendezvousTimeout");
            return this;
        }

        public Builder numWorkerThreads(int value) {
            this.numWorkerThreads = requirePositive(value, "numWorkerThreads");
            return this;
        }

        public Builder listenHost(String value) {
            this.listenHost = Objects.requireNonNull(value, "listenHost");
            return this;
        }

        public Builder ioThreads(int value) {
            this.ioThreads = requirePositive(value, "ioThreads");
            return this;
        }

        public Builder maxMessageBytes(long value) {
            if (value < 1024 || value > Integer.MAX_VALUE - 8) {
                throw invalid("maxMessageBytes must be between 1024 and " + (Integer.MAX_VALUE - 8) + ", got " + value);
            }
            this.maxMessageBytes = value;
            return this;
        }

        public Builder outOfBandThreshold(int value) {
            this.outOfBandThreshold = requirePositive(value, "outOfBandThreshold");
            return this;
        }

        /** Only classes under these prefixes (plus the JDK's value and collection types) may arrive. */
        public Builder allowClassPrefix(String prefix) {
            allowedClassPrefixes.add(Objects.requireNonNull(prefix, "prefix"));
            return this;
        }

        /** Only methods of classes under these prefixes may be called by peers. */
        public Builder allowFunctionPrefix(String prefix) {
            allowedFunctionPrefixes.add(Objects.requireNonNull(prefix, "prefix"));
            return this;
        }

        public Builder addInterceptor(CallInterceptor interceptor) {
            interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
            return this;
        }

        public Builder addSerializationExtension(SerializationExtension extension) {
            serializationExtensions.add(Objects.requireNonNull(extension, "extension"));
            return this;
        }

        /**
         * Adds to the device map for calls to worker {@code to} (PyTorch's {@code set_device_map}):
         * tensors on a key device here arrive on the value device there. Mappings must stay
         * one-to-one, with the entries already set for {@code to} too; only {@code "cpu"} exists.
         *
         * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} for a mapping that is not
         *                      one-to-one, a negative device index, or a device other than the CPU
         */
        public Builder setDeviceMap(String to, Map<String, String> deviceMap) {
            Objects.requireNonNull(to, "to");
            Objects.requireNonNull(deviceMap, "deviceMap");
            deviceMaps.put(to, Devices.merge(to, deviceMaps.getOrDefault(to, Map.of()), deviceMap));
            return this;
        }

        /** Replaces every device map (PyTorch's {@code device_maps=} argument); checked as {@link #setDeviceMap}. */
        public Builder deviceMaps(Map<String, Map<String, String>> maps) {
            Map<String, Map<String, String>> checked = new LinkedHashMap<>();
            maps.forEach((to, map) -> checked.put(Objects.requireNonNull(to, "to"), Devices.merge(to, Map.of(), map)));
            deviceMaps.clear();
            deviceMaps.putAll(checked);
            return this;
        }

        /**
         * The devices this worker uses (PyTorch's {@code set_devices}); no duplicates, and only
         * {@code "cpu"} exists.
         */
        public Builder setDevices(List<String> value) {
            this.devices = Devices.checkList(Objects.requireNonNull(value, "devices"));
            return this;
        }

        /** Whether to reach peers on this host over a Unix domain socket; false forces TCP. */
        public Builder unixSockets(boolean value) {
            this.unixSockets = value;
            return this;
        }

        /** Overrides this host's identity (workers with equal ids use the same-host channel). */
        public Builder hostId(String value) {
            this.hostId = Objects.requireNonNull(value, "hostId");
            return this;
        }

        public Builder sendQueueBytes(long value) {
            if (value < 1) {
                throw invalid("sendQueueBytes must be at least 1, got " + value);
            }
            this.sendQueueBytes = value;
            return this;
        }

        public Builder sendQueueTimeout(Duration value) {
            this.sendQueueTimeout = requireNotNegative(value, "sendQueueTimeout");
            return this;
        }

        /** Bound of a graceful connection close; 0 closes at once (see the table above). */
        public Builder closeTimeout(Duration value) {
            this.closeTimeout = requireNotNegative(value, "closeTimeout");
            return this;
        }

        public Builder maxQueuedRequests(int value) {
            this.maxQueuedRequests = requirePositive(value, "maxQueuedRequests");
            return this;
        }

        public Builder maxQueuedRequestBytes(long value) {
            if (value < 1) {
                throw invalid("maxQueuedRequestBytes must be at least 1, got " + value);
            }
            this.maxQueuedRequestBytes = value;
            return this;
        }

        /**
         * Direct memory kept for receiving messages over 1 MiB and reused; 0 allocates a fresh buffer
         * per message (see the table above).
         */
        public Builder receiveBufferPoolBytes(long value) {
            if (value < 0) {
                throw invalid("receiveBufferPoolBytes must not be negative, got " + value);
            }
            this.receiveBufferPoolBytes = value;
            return this;
        }

        /**
         * Synchronous-exchange lanes this worker may open to each peer (0 to
         * {@value RpcBackendOptions#MAX_SYNC_LANES}; 0: off; see the table above).
         */
        public Builder syncLanes(int value) {
            if (value < 0 || value > MAX_SYNC_LANES) {
                throw invalid("syncLanes must be between 0 and " + MAX_SYNC_LANES + ", got " + value);
            }
            this.syncLanes = value;
            return this;
        }

        /**
         * Size of the shared-memory segment for same-host peers (at most 2 GiB); 0 turns shared
         * memory off (see the table above).
         */
        public Builder sharedMemoryBytes(long value) {
            if (value < 0 || value > (2L << 30)) {
                throw invalid("sharedMemoryBytes must be between 0 and 2 GiB, got " + value);
            }
            this.sharedMemoryBytes = value;
            return this;
        }

        /**
         * The secret every worker of the group holds (at least 16 characters); connections are
         * authenticated with it (see the table above). Null turns authentication off.
         *
         * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} if it is shorter than 16 characters
         */
        public Builder authToken(String value) {
            if (value != null) {
                PeerAuthentication.of(value, authTimeout);
            }
            this.authToken = value;
            return this;
        }

        /** How long a connection may take to authenticate before it is closed; must be positive. */
        public Builder authTimeout(Duration value) {
            Objects.requireNonNull(value, "authTimeout");
            if (value.isNegative() || value.isZero()) {
                throw invalid("authTimeout must be positive, got " + value);
            }
            this.authTimeout = value;
            return this;
        }

        /**
         * TLS for TCP connections with {@code context} (see the table above; {@link TlsContexts}
         * builds one from key stores); null turns it off, whatever {@code FERRY_TLS_KEYSTORE} says.
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            this.tlsFromEnvironment = false;
            return this;
        }

        /**
         * Whether the end that opens a TLS connection checks that the peer's certificate names the host it
         * dialed (see the table above); default {@code FERRY_TLS_VERIFY_HOSTNAMES=1}, else off.
         */
        public Builder tlsVerifyHostnames(boolean verify) {
            this.tlsVerifyHostnames = verify;
            return this;
        }

        /**
         * When the agent registers its debug info as a JMX MBean (see the table above); default from
         * {@code FERRY_JMX}, else {@link JmxRegistration#IF_RUNNING}.
         */
        public Builder jmx(JmxRegistration registration) {
            this.jmx = Objects.requireNonNull(registration, "registration");
            return this;
        }

        public RpcBackendOptions build() {
            return new RpcBackendOptions(this);
        }

        private static Duration requireNotNegative(Duration value, String what) {
            Objects.requireNonNull(value, what);
            if (value.isNegative()) {
                throw invalid(what + " must not be negative, got " + value);
            }
            return value;
        }

        private static int requirePositive(int value, String what) {
            if (value < 1) {
                throw invalid(what + " must be at least 1, got " + value);
            }
            return value;
        }

        private static RpcException invalid(String message) {
            return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
        }
    }
}
