package dev.ferry.rpc;

import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.spi.SerializationExtension;

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
 *   <tr><td>heartbeatTimeout</td><td>30 s</td><td>how long a connected peer may send nothing (heartbeats included:
 *       a peer silent for a fifth of this is sent one, which it answers however busy its request threads are) before
 *       it is declared lost: its calls fail with {@link RpcException.Code#UNAVAILABLE} naming it and saying why, its
 *       connections close, {@link dev.ferry.rpc.spi.PeerListener}s hear of it, and graceful shutdown does not wait
 *       for it. Detects a peer that is stopped (SIGSTOP), hung or cut off by the network, which no socket error
 *       reports; detection takes this plus at most a fifth of it. A later call reconnects: a peer that is back (a
 *       partition that healed) is used again. {@link Duration#ZERO}: no heartbeats (only a closed connection makes
 *       a peer lost). Set it above the longest pause a live worker may take (a full garbage collection)</td></tr>
 *   <tr><td>numWorkerThreads</td><td>16</td><td>how many requests may run at once on this worker; a request
 *       waiting on an RPC future does not count, so nested calls never deadlock</td></tr>
 *   <tr><td>listenHost</td><td>127.0.0.1</td><td>the address this worker listens on
 *       and advertises to the others</td></tr>
 *   <tr><td>maxMessageBytes</td><td>1 GiB</td><td>largest message sent or accepted</td></tr>
 *   <tr><td>outOfBandThreshold</td><td>64 KiB</td><td>binary buffers this large travel outside the object stream</td></tr>
 *   <tr><td>applicationPackages</td><td>none; {@code initRpc} and {@code RpcAgents.start} add
 *       {@code FERRY_APPLICATION_PACKAGES} (comma-separated), which {@code ferry run} sets to its main class's
 *       package</td><td>the application's own code: peers may call the methods of these packages' classes
 *       (and of their subpackages'; lambdas included, private methods never) and send instances of them.
 *       Everything else is refused with {@link RpcException.Code#UNKNOWN_FUNCTION} or
 *       {@link RpcException.Code#SERIALIZATION_ERROR}, but for what {@link RpcCallable} marks, the entry
 *       points of libraries built on Ferry ({@link dev.ferry.rpc.spi.TrustedFunctions}), the JDK's value types
 *       and what the two options below add. The JDK's and Ferry's own classes are never callable, whatever the
 *       lists say (see {@code docs/security.md})</td></tr>
 *   <tr><td>allowedFunctionPrefixes</td><td>none</td><td>further packages or classes whose methods peers may
 *       call (a library's entry points)</td></tr>
 *   <tr><td>allowedClassPrefixes</td><td>none</td><td>further packages or classes whose instances peers may send
 *       (data types outside the application's packages; JDK classes such as {@code java.net.URL} too, but never
 *       code-execution, reflection or JNDI types)</td></tr>
 *   <tr><td>deviceMaps</td><td>empty</td><td>per destination worker, which local device maps to which of
 *       its devices ({@link Builder#setDeviceMap}); checked one-to-one when set and against the group at
 *       initialization</td></tr>
 *   <tr><td>devices</td><td>empty</td><td>the devices this worker uses ({@link Builder#setDevices})</td></tr>
 *   <tr><td>maxQueuedRequests</td><td>1024</td><td>requests received and not yet started (waiting for one of the
 *       {@code numWorkerThreads}) above which this worker stops reading from the connection that brought the last
 *       one (resumes below half)</td></tr>
 *   <tr><td>maxQueuedRequestBytes</td><td>256 MiB</td><td>the same limit counted in payload bytes</td></tr>
 *   <tr><td>authToken</td><td>none</td><td>a secret shared by the group (at least
 *       16 characters): every connection, TCP or Unix socket, starts with both ends proving they hold
 *       it (a challenge-response over fresh nonces with HMAC-SHA256; the token never crosses the wire) before
 *       either reads anything else. A peer without it, with another, or anything else that connects is dropped
 *       and the calls that needed it fail with {@link RpcException.Code#UNAUTHENTICATED}; the rest of the group
 *       is unaffected. Authenticates, does not encrypt (see {@code tls}). {@code ferry run} gives its workers a
 *       fresh one unless the environment has one. A {@code tcp://} or {@code env://} rendezvous store is
 *       authenticated the same way (rank 0's server and every client)</td></tr>
 *   <tr><td>allowUnauthenticatedNetwork</td><td>false</td><td>whether this worker may listen on an address
 *       other than loopback with neither {@code authToken} nor {@code tls}: refused by default, since anyone who
 *       can reach the address could then join the group or call its workers; {@code initRpc} fails with
 *       {@link RpcException.Code#INVALID_ARGUMENT} saying so. Without a token a worker logs a warning at
 *       start</td></tr>
 *   <tr><td>authTimeout</td><td>10 s</td><td>how long a connection may take to authenticate before it is
 *       closed; with or without a token, a connection this worker accepted must also have sent its HELLO by
 *       then, and until it has, it may send only a few small frames (see {@code docs/security.md}); the same
 *       bound holds for the handshakes of rank 0's {@code tcp://} or {@code env://} rendezvous store</td></tr>
 *   <tr><td>stallTimeout</td><td>30 s</td><td>a connection (to this worker or its rendezvous store) whose
 *       peer is in the middle of a frame and sends less than 1 MiB of it, or finishes none, within this time
 *       twice in a row is closed (half a frame, a byte at a time); idle connections, between frames, are
 *       not</td></tr>
 *   <tr><td>tls</td><td>none</td><td>an {@link SSLContext} with this worker's
 *       key and the certificates it trusts ({@link TlsContexts}): every TCP connection and every
 *       connection to a {@code tcp://} or {@code env://} rendezvous store (rank 0's server and its clients) is then
 *       TLS with both ends presenting a certificate the other must trust (mutual TLS; host names are checked only with
 *       {@code tlsVerifyHostnames}, and not on store connections), so
 *       traffic between hosts is encrypted and only holders of a trusted key get in; a failed handshake fails with
 *       {@link RpcException.Code#UNAUTHENTICATED}. Unix-socket connections stay in the clear (same host, a
 *       directory only this user can enter). Costs the encryption (a large message is copied through it; TCP
 *       reads no longer land straight in messages)</td></tr>
 *   <tr><td>tlsVerifyHostnames</td><td>off</td><td>with {@code tls}, the
 *       worker that opens a connection also checks that the certificate the other end presents names the host it
 *       dialed (the address the peer registered: an IP address or a DNS name; HTTPS's rules, RFC 2818), so that a
 *       holder of another trusted certificate (one CA for many services) cannot stand in for a worker. The accepting
 *       end checks the chain only, as an HTTPS server does. A mismatch fails the connection with
 *       {@link RpcException.Code#UNAUTHENTICATED}</td></tr>
 *   <tr><td>jmx</td><td>{@link JmxRegistration#IF_RUNNING}</td><td>when the agent shows its debug info as the JMX MBean
 *       {@code dev.ferry.rpc:type=RpcAgent,name="<worker>"}: by default only where the JVM already runs its platform
 *       MBean server ({@code -Dcom.sun.management.jmxremote}, a monitoring agent, the application), since starting
 *       it costs an idle worker CPU right after init; {@code ALWAYS} starts it (for JConsole attaching later)</td></tr>
 *   <tr><td>failOnRRefLeaks</td><td>false</td><td>PyTorch's {@code _ignore_rref_leak = False}: when shutdown
 *       finds RRefs this worker owns that others still reference, it closes the agent as usual and then throws
 *       {@link RpcException.Code#ILLEGAL_STATE} naming each leaked RRef and fork, instead of only logging them
 *       (for tests that must catch forgotten references)</td></tr>
 *   <tr><td>transport</td><td>{@link TransportTuning#defaults()}</td><td>how the Netty transport moves bytes:
 *       Unix sockets, shared memory, lanes, direct writes, spinning, buffers ({@link TransportTuning}); nothing
 *       in it changes what a call does</td></tr>
 *   <tr><td>statusUrl</td><td>none</td><td>where the agent reports its state for a cluster status page (twice a
 *       second while calls end, every 2 s when idle): an HTTP(S) URL that takes a POST of a JSON snapshot (state,
 *       host, calls and latency per peer, in-flight and queued calls, RRef counts, recent errors,
 *       {@link Metrics#report reported} series), with {@code Authorization: Bearer} the auth token when there is
 *       one; {@code ferry run} sets it for its page</td></tr>
 *   <tr><td>statusPagePort</td><td>-1: none</td><td>for a group started without {@code ferry run}: rank 0
 *       serves a live status page on 127.0.0.1 at this port ({@code 0}: a free one; its address is logged and in
 *       rank 0's debug info as {@code agent.status_page}) through the {@link dev.ferry.rpc.spi.StatusPageProvider}
 *       on the class path ({@code ferry-status}), and every worker with this option reports to it (a
 *       {@code statusUrl} given as well wins)</td></tr>
 *   <tr><td>faultInjection</td><td>none</td><td>faults this worker injects into what it sends, for testing a
 *       program's fault tolerance: failed sends, delays, failed connections by message kind
 *       ({@link FaultInjection}, PyTorch's {@code FAULTY_TENSORPIPE})</td></tr>
 * </table>
 *
 * <h2>The environment</h2>
 * Options never read the environment themselves: a builder's defaults are the constants above.
 * {@link RpcAgents#start} (and so {@link Rpc#initRpc}) reads it once, when the agent starts, and
 * fills in the options below that the program did not set (launched workers get their
 * {@code FERRY_AUTH_TOKEN} from {@code ferry run}):
 *
 * <table>
 *   <caption>Environment variables read at start</caption>
 *   <tr><th>variable</th><th>option</th></tr>
 *   <tr><td>{@code FERRY_AUTH_TOKEN}</td><td>authToken</td></tr>
 *   <tr><td>{@code FERRY_TLS_KEYSTORE}, {@code FERRY_TLS_KEYSTORE_PASSWORD}, {@code FERRY_TLS_TRUSTSTORE}
 *       (default: the key store), {@code FERRY_TLS_TRUSTSTORE_PASSWORD}</td><td>tls (PKCS12 or JKS key stores,
 *       {@link TlsContexts#fromKeyStores})</td></tr>
 *   <tr><td>{@code FERRY_TLS_VERIFY_HOSTNAMES} ({@code 1} or {@code true})</td><td>tlsVerifyHostnames</td></tr>
 *   <tr><td>{@code FERRY_SOCKET_HOST}</td><td>listenHost</td></tr>
 *   <tr><td>{@code FERRY_JMX} ({@code 1}: always, {@code 0}: never)</td><td>jmx</td></tr>
 *   <tr><td>{@code FERRY_STATUS_URL} (set by {@code ferry run})</td><td>statusUrl</td></tr>
 *   <tr><td>{@code FERRY_APPLICATION_PACKAGES} (comma-separated; {@code .} is the unnamed package; set by
 *       {@code ferry run} to its main class's package)</td><td>applicationPackages (added to the program's)</td></tr>
 * </table>
 *
 * <p>Large binary data: a {@code ByteBuffer} (heap or direct) of at least 32 KiB that travels out of
 * band is written to the socket from its own memory, not copied; do not change its contents until the
 * call's future completes (for a result: until it has been sent). Primitive arrays ({@code float[]}
 * ...) are copied once into direct memory on the way out and once out of the received buffer. So the
 * fastest form for large tensors is a direct {@code ByteBuffer}. Between workers on one host (shared
 * memory, see {@link TransportTuning}) buffers of 256 KiB or more are copied once into shared memory
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
    /** Default {@code heartbeatTimeout}: well above a live worker's pauses, well below the call timeout. */
    public static final Duration DEFAULT_HEARTBEAT_TIMEOUT = Duration.ofSeconds(30);

    private final String initMethod;
    private final Duration rpcTimeout;
    private final Duration rendezvousTimeout;
    private final Duration heartbeatTimeout;
    private final int numWorkerThreads;
    private final String listenHost;
    private final long maxMessageBytes;
    private final int outOfBandThreshold;
    private final List<String> applicationPackages;
    private final List<String> allowedClassPrefixes;
    private final List<String> allowedFunctionPrefixes;
    private final List<CallInterceptor> interceptors;
    private final List<SerializationExtension> serializationExtensions;
    private final Map<String, Map<String, String>> deviceMaps;
    private final List<String> devices;
    private final int maxQueuedRequests;
    private final long maxQueuedRequestBytes;
    private final String authToken;
    private final Duration authTimeout;
    private final Duration stallTimeout;
    private final boolean allowUnauthenticatedNetwork;
    private final SSLContext tls;
    private final boolean tlsVerifyHostnames;
    private final JmxRegistration jmx;
    private final boolean failOnRRefLeaks;
    private final String statusUrl;
    private final int statusPagePort;
    private final TransportTuning transport;
    private final FaultInjection faultInjection;
    /** The options the environment may fill in that the program set itself. */
    private final java.util.Set<EnvironmentOption> explicit;

    private RpcBackendOptions(Builder b) {
        if (b.authToken != null) {
            PeerAuthentication.of(b.authToken, b.authTimeout); // the same checks the transport makes, at build time
        }
        this.authToken = b.authToken;
        this.authTimeout = b.authTimeout;
        this.stallTimeout = b.stallTimeout;
        this.allowUnauthenticatedNetwork = b.allowUnauthenticatedNetwork;
        this.tls = b.tls;
        this.tlsVerifyHostnames = b.tlsVerifyHostnames;
        this.jmx = b.jmx;
        this.failOnRRefLeaks = b.failOnRRefLeaks;
        this.statusUrl = b.statusUrl;
        this.statusPagePort = b.statusPagePort;
        this.transport = b.transport;
        this.faultInjection = b.faultInjection;
        this.explicit = java.util.Collections.unmodifiableSet(java.util.EnumSet.copyOf(b.explicit));
        this.maxQueuedRequests = b.maxQueuedRequests;
        this.maxQueuedRequestBytes = b.maxQueuedRequestBytes;
        this.initMethod = b.initMethod;
        this.rpcTimeout = b.rpcTimeout;
        this.rendezvousTimeout = b.rendezvousTimeout;
        this.heartbeatTimeout = b.heartbeatTimeout;
        this.numWorkerThreads = b.numWorkerThreads;
        this.listenHost = b.listenHost;
        this.maxMessageBytes = b.maxMessageBytes;
        this.outOfBandThreshold = b.outOfBandThreshold;
        this.applicationPackages = List.copyOf(b.applicationPackages);
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

    /** How long a connected peer may send nothing before it is declared lost; ZERO: no heartbeats. */
    public Duration heartbeatTimeout() {
        return heartbeatTimeout;
    }

    public int numWorkerThreads() {
        return numWorkerThreads;
    }

    public String listenHost() {
        return listenHost;
    }

    public long maxMessageBytes() {
        return maxMessageBytes;
    }

    public int outOfBandThreshold() {
        return outOfBandThreshold;
    }

    /** The application's packages (and classes): callable by peers, and their instances decodable. */
    public List<String> applicationPackages() {
        return applicationPackages;
    }

    /** Packages and classes whose instances peers may send, besides the application's. */
    public List<String> allowedClassPrefixes() {
        return allowedClassPrefixes;
    }

    /** Packages and classes whose methods peers may call, besides the application's. */
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

    public int maxQueuedRequests() {
        return maxQueuedRequests;
    }

    public long maxQueuedRequestBytes() {
        return maxQueuedRequestBytes;
    }

    /** The group's authentication token; null when connections are not authenticated. Never logged. */
    public String authToken() {
        return authToken;
    }

    /** How long a connection may take to authenticate. */
    public Duration authTimeout() {
        return authTimeout;
    }

    /** How long a connection may stall in the middle of a frame before it is closed (see the table above). */
    public Duration stallTimeout() {
        return stallTimeout;
    }

    /** Whether this worker may listen on a non-loopback address with neither a token nor TLS. */
    public boolean allowUnauthenticatedNetwork() {
        return allowUnauthenticatedNetwork;
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

    /** Whether shutdown fails, naming them, when RRefs this worker owns are still referenced elsewhere. */
    public boolean failOnRRefLeaks() {
        return failOnRRefLeaks;
    }

    /** The port of the status page rank 0 serves (0: a free one), or -1: none. */
    public int statusPagePort() {
        return statusPagePort;
    }

    /** Where the agent reports its state for a status page, or null: none. */
    public String statusUrl() {
        return statusUrl;
    }

    /** How the Netty transport moves bytes (never changes what a call does). */
    /** The faults this worker injects into what it sends, for tests; null (the default) for none. */
    public FaultInjection faultInjection() {
        return faultInjection;
    }

    public TransportTuning transport() {
        return transport;
    }

    /** Whether the program set {@code option} itself (then the environment does not replace it). */
    boolean isExplicit(EnvironmentOption option) {
        return explicit.contains(option);
    }

    /** The options {@link FerryEnvironment} may fill in, when the program did not set them. */
    enum EnvironmentOption { AUTH_TOKEN, TLS, TLS_VERIFY_HOSTNAMES, LISTEN_HOST, JMX, STATUS_URL }

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
        private Duration heartbeatTimeout = DEFAULT_HEARTBEAT_TIMEOUT;
        private int numWorkerThreads = DEFAULT_NUM_WORKER_THREADS;
        private String listenHost = "127.0.0.1";
        private long maxMessageBytes = 1L << 30;
        private int outOfBandThreshold = 64 * 1024;
        private final List<String> applicationPackages = new ArrayList<>();
        private final List<String> allowedClassPrefixes = new ArrayList<>();
        private final List<String> allowedFunctionPrefixes = new ArrayList<>();
        private final List<CallInterceptor> interceptors = new ArrayList<>();
        private final List<SerializationExtension> serializationExtensions = new ArrayList<>();
        private final Map<String, Map<String, String>> deviceMaps = new LinkedHashMap<>();
        private List<String> devices = List.of();
        private int maxQueuedRequests = 1024;
        private long maxQueuedRequestBytes = 256L << 20;
        private String authToken;
        private Duration authTimeout = PeerAuthentication.DEFAULT_TIMEOUT;
        private Duration stallTimeout = ConnectionLimits.DEFAULT_STALL_TIMEOUT;
        private boolean allowUnauthenticatedNetwork;
        private SSLContext tls;
        private boolean tlsVerifyHostnames;
        private JmxRegistration jmx = JmxRegistration.IF_RUNNING;
        private boolean failOnRRefLeaks;
        private String statusUrl;
        private int statusPagePort = -1;
        private TransportTuning transport = TransportTuning.defaults();
        private FaultInjection faultInjection;
        private final java.util.Set<EnvironmentOption> explicit = java.util.EnumSet.noneOf(EnvironmentOption.class);

        private Builder() {
        }

        private Builder(RpcBackendOptions o) {
            initMethod = o.initMethod;
            rpcTimeout = o.rpcTimeout;
            rendezvousTimeout = o.rendezvousTimeout;
            heartbeatTimeout = o.heartbeatTimeout;
            numWorkerThreads = o.numWorkerThreads;
            listenHost = o.listenHost;
            maxMessageBytes = o.maxMessageBytes;
            outOfBandThreshold = o.outOfBandThreshold;
            applicationPackages.addAll(o.applicationPackages);
            allowedClassPrefixes.addAll(o.allowedClassPrefixes);
            allowedFunctionPrefixes.addAll(o.allowedFunctionPrefixes);
            interceptors.addAll(o.interceptors);
            serializationExtensions.addAll(o.serializationExtensions);
            deviceMaps.putAll(o.deviceMaps);
            devices = o.devices;
            maxQueuedRequests = o.maxQueuedRequests;
            maxQueuedRequestBytes = o.maxQueuedRequestBytes;
            authToken = o.authToken;
            authTimeout = o.authTimeout;
            stallTimeout = o.stallTimeout;
            allowUnauthenticatedNetwork = o.allowUnauthenticatedNetwork;
            tls = o.tls;
            tlsVerifyHostnames = o.tlsVerifyHostnames;
            jmx = o.jmx;
            failOnRRefLeaks = o.failOnRRefLeaks;
            statusUrl = o.statusUrl;
            statusPagePort = o.statusPagePort;
            transport = o.transport;
            faultInjection = o.faultInjection;
            explicit.addAll(o.explicit);
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

        /**
         * How long a connected peer may send nothing before it is declared lost (see the table
         * above); {@link Duration#ZERO} turns heartbeats off. At least 10 ms otherwise.
         */
        public Builder heartbeatTimeout(Duration value) {
            requireNotNegative(value, "heartbeatTimeout");
            if (!value.isZero() && value.toMillis() < 10) {
                throw invalid("heartbeatTimeout must be zero (off) or at least 10 ms, got " + value);
            }
            this.heartbeatTimeout = value;
            return this;
        }

        public Builder numWorkerThreads(int value) {
            this.numWorkerThreads = requirePositive(value, "numWorkerThreads");
            return this;
        }

        public Builder listenHost(String value) {
            this.listenHost = Objects.requireNonNull(value, "listenHost");
            explicit.add(EnvironmentOption.LISTEN_HOST);
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

        /**
         * Adds a package of the application's own code (or a class): peers may call the methods of its
         * classes and of its subpackages' classes, and send instances of them (see the table above).
         * {@code ""} is the unnamed package. {@code ferry run} declares its main class's package.
         *
         * <pre>{@code
         * RpcBackendOptions.builder().applicationPackage("com.example.training").build();
         * }</pre>
         */
        public Builder applicationPackage(String name) {
            applicationPackages.add(Objects.requireNonNull(name, "name"));
            return this;
        }

        /** Replaces the application's packages (see {@link #applicationPackage}); empty: none. */
        public Builder applicationPackages(List<String> names) {
            List<String> copy = List.copyOf(names);
            applicationPackages.clear();
            applicationPackages.addAll(copy);
            return this;
        }

        /**
         * Lets peers also send instances of the classes of this package (and its subpackages), or of this
         * class; code-execution, reflection and JNDI types stay refused whatever it says.
         */
        public Builder allowClassPrefix(String prefix) {
            allowedClassPrefixes.add(Objects.requireNonNull(prefix, "prefix"));
            return this;
        }

        /**
         * Lets peers also call the methods of the classes of this package (and its subpackages), or of this
         * class: a library's entry points, say. The JDK's and Ferry's own classes stay refused.
         */
        public Builder allowFunctionPrefix(String prefix) {
            allowedFunctionPrefixes.add(Objects.requireNonNull(prefix, "prefix"));
            return this;
        }

        /**
         * Whether this worker may listen on a non-loopback address with neither {@link #authToken} nor
         * {@link #tls} (default false: refused at start, see the table above).
         */
        public Builder allowUnauthenticatedNetwork(boolean allow) {
            this.allowUnauthenticatedNetwork = allow;
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
            explicit.add(EnvironmentOption.AUTH_TOKEN);
            return this;
        }

        /** How long a connection may take to authenticate before it is closed; must be positive. */
        public Builder authTimeout(Duration value) {
            this.authTimeout = positive("authTimeout", value);
            return this;
        }

        /**
         * How long a frame may stall before its connection is closed (default 30 s; see the table
         * above); must be positive.
         */
        public Builder stallTimeout(Duration value) {
            this.stallTimeout = positive("stallTimeout", value);
            return this;
        }

        private static Duration positive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw invalid(name + " must be positive, got " + value);
            }
            return value;
        }

        /**
         * TLS for TCP connections with {@code context} (see the table above; {@link TlsContexts}
         * builds one from key stores); null turns it off, whatever {@code FERRY_TLS_KEYSTORE} says.
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            explicit.add(EnvironmentOption.TLS);
            return this;
        }

        /**
         * Whether the end that opens a TLS connection checks that the peer's certificate names the host it
         * dialed (see the table above); default off.
         */
        public Builder tlsVerifyHostnames(boolean verify) {
            this.tlsVerifyHostnames = verify;
            explicit.add(EnvironmentOption.TLS_VERIFY_HOSTNAMES);
            return this;
        }

        /**
         * When the agent registers its debug info as a JMX MBean (see the table above); default
         * {@link JmxRegistration#IF_RUNNING}.
         */
        public Builder jmx(JmxRegistration registration) {
            this.jmx = Objects.requireNonNull(registration, "registration");
            explicit.add(EnvironmentOption.JMX);
            return this;
        }

        /**
         * Whether shutdown throws {@link RpcException.Code#ILLEGAL_STATE}, naming the RRefs this worker
         * owns that others still reference, after closing the agent (PyTorch's
         * {@code _ignore_rref_leak = False}); default false: they are logged.
         */
        public Builder failOnRRefLeaks(boolean fail) {
            this.failOnRRefLeaks = fail;
            return this;
        }

        /**
         * Where the agent reports its state for a status page (see the table above), or null for
         * nowhere (the default). Only {@code http} and {@code https} URLs.
         */
        public Builder statusUrl(String url) {
            if (url != null) {
                java.net.URI uri;
                try {
                    uri = java.net.URI.create(url);
                } catch (IllegalArgumentException e) {
                    throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "statusUrl is not a URL: " + url, e);
                }
                if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
                    throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                            "statusUrl must be an http or https URL, got " + url);
                }
            }
            this.statusUrl = url;
            explicit.add(EnvironmentOption.STATUS_URL);
            return this;
        }

        /**
         * Rank 0 serves the group's live status page on 127.0.0.1:{@code port} ({@code 0}: a free
         * port; -1, the default: none), and the workers report to it (see the table above). Needs a
         * {@link dev.ferry.rpc.spi.StatusPageProvider} on the class path, such as {@code ferry-status}.
         */
        public Builder statusPagePort(int port) {
            if (port < -1 || port > 65535) {
                throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                        "statusPagePort must be -1 (none), 0 (a free port) or 1..65535, got " + port);
            }
            this.statusPagePort = port;
            return this;
        }

        /** How the Netty transport moves bytes ({@link TransportTuning}). */
        public Builder transport(TransportTuning value) {
            this.transport = Objects.requireNonNull(value, "transport");
            return this;
        }

        /**
         * Faults this worker injects into what it sends, for testing a program's fault tolerance
         * ({@link FaultInjection}; PyTorch's {@code FAULTY_TENSORPIPE} backend); null, the default:
         * none, and nothing on a message's path checks for any.
         */
        public Builder faultInjection(FaultInjection faults) {
            this.faultInjection = faults;
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
