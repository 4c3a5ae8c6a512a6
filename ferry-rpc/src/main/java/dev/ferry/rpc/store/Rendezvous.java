package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.security.NetworkExposure;
import dev.ferry.rpc.internal.store.InitMethodUrl;
import dev.ferry.rpc.internal.store.SchedulerEnvironment;
import dev.ferry.rpc.internal.store.StoreArguments;
import dev.ferry.rpc.internal.store.StoreProviders;
import dev.ferry.rpc.spi.StoreAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns an init method URL into a connected {@link Store}, as c10d's {@code rendezvous()} does for
 * {@code init_rpc}. Immutable; build one, then {@link #connect()}.
 *
 * <table>
 *   <caption>Supported init methods</caption>
 *   <tr><th>URL</th><th>Store</th><th>rank / world size from</th></tr>
 *   <tr><td>{@code env://}</td><td>TcpStore at {@code MASTER_ADDR:MASTER_PORT}, served by rank 0 (by the
 *       launcher when {@code TORCHELASTIC_USE_AGENT_STORE=True}, as torchrun's)</td>
 *       <td>arguments, else URL query, else {@code RANK} / {@code WORLD_SIZE}</td></tr>
 *   <tr><td>{@code tcp://host:port}</td><td>TcpStore at {@code host:port}, served by rank 0</td>
 *       <td>arguments, else {@code ?rank=R&world_size=N}</td></tr>
 *   <tr><td>{@code file:///path}</td><td>{@link FileStore} on {@code /path}</td>
 *       <td>arguments, else {@code ?rank=R&world_size=N}</td></tr>
 *   <tr><td>{@code etcd://host:port[,host:port]/prefix}</td><td>an etcd store (module {@code
 *       ferry-store-etcd})</td><td>arguments, else URL query, else {@code RANK} / {@code WORLD_SIZE}</td></tr>
 *   <tr><td>{@code zookeeper://host:port[,host:port]/path}</td><td>a ZooKeeper store (module {@code
 *       ferry-store-zookeeper})</td><td>arguments, else URL query, else {@code RANK} / {@code WORLD_SIZE}</td></tr>
 *   <tr><td>another {@code scheme://}</td><td>whatever the {@link dev.ferry.rpc.spi.StoreProvider}
 *       of that scheme opens</td><td>arguments, else URL query, else {@code RANK} / {@code WORLD_SIZE}</td></tr>
 * </table>
 *
 * <pre>{@code
 * try (RendezvousResult rdv = Rendezvous.builder()
 *         .initMethod("tcp://10.0.0.1:29500").rank(rank).worldSize(4)
 *         .timeout(Duration.ofSeconds(60))
 *         .build()
 *         .connect()) {
 *     Store store = new PrefixStore("rpc_prefix_0", rdv.store());
 *     ...
 * }
 * }</pre>
 *
 * <p>Missing or inconsistent settings fail with {@link Code#INVALID_ARGUMENT} and a message in
 * PyTorch's words, e.g. "Error initializing Ferry using env:// rendezvous: environment variable
 * RANK expected, but not set". A server that cannot bind its port (for instance "Address already
 * in use") or a client that cannot reach the server in time fails with {@link
 * Code#RENDEZVOUS_FAILED}.
 *
 * <p>The environment is injectable ({@link Builder#environment(Map)}) so tests and embedders need
 * not touch the process environment. Under a scheduler, the variables it sets stand in for missing
 * ones: Slurm's {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID} and the first host
 * of {@code SLURM_JOB_NODELIST} (with {@code MASTER_PORT} 29500 unless set) give {@code RANK},
 * {@code WORLD_SIZE}, {@code LOCAL_RANK} and {@code MASTER_ADDR}; a Kubernetes Indexed Job's {@code
 * JOB_COMPLETION_INDEX} gives {@code RANK}. Variables set explicitly win. See {@code docs/cluster.md}.
 */
public final class Rendezvous {
    private static final Logger log = LoggerFactory.getLogger(Rendezvous.class);

    /** PyTorch's default init method. */
    public static final String DEFAULT_INIT_METHOD = "env://";
    /**
     * torchrun's variable ({@code True}) for "the launcher serves the env:// store": every worker,
     * rank 0 too, connects to it as a client.
     */
    public static final String USE_AGENT_STORE = "TORCHELASTIC_USE_AGENT_STORE";
    /** PyTorch's default process group timeout for rendezvous (30 minutes). */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private final String initMethod;
    private final OptionalInt rank;
    private final OptionalInt worldSize;
    private final Duration timeout;
    private final Map<String, String> environment;
    private final String authToken;
    private final SSLContext tls;
    private final boolean allowUnauthenticatedNetwork;
    private final Duration stallTimeout;
    private final Duration authTimeout;

    private Rendezvous(Builder builder) {
        this.stallTimeout = builder.stallTimeout;
        this.authTimeout = builder.authTimeout;
        this.authToken = builder.authToken;
        this.tls = builder.tls;
        this.allowUnauthenticatedNetwork = builder.allowUnauthenticatedNetwork;
        this.initMethod = builder.initMethod;
        this.rank = builder.rank;
        this.worldSize = builder.worldSize;
        this.timeout = builder.timeout;
        // Slurm's and Kubernetes' variables stand in for the ones a scheduler does not set itself.
        this.environment = SchedulerEnvironment.withRendezvousVariables(builder.environment);
    }

    /**
     * This process's rank as {@code env://} reads it: {@code RANK}, else under a scheduler its own
     * variable ({@code SLURM_PROCID}, a Kubernetes Indexed Job's {@code JOB_COMPLETION_INDEX}); for a
     * worker name that is unique however the job was started.
     *
     * <pre>{@code
     * Rpc.initRpc("worker" + Rendezvous.environmentRank().orElse(0));
     * }</pre>
     */
    public static OptionalInt environmentRank() {
        String rank = SchedulerEnvironment.withRendezvousVariables(System.getenv()).get("RANK");
        try {
            return rank == null || rank.isBlank() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(rank.strip()));
        } catch (NumberFormatException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "environment variable RANK must be an integer, got '" + rank + "'");
        }
    }

    /** A builder with PyTorch's defaults: {@code env://}, 30 minutes, the process environment. */
    public static Builder builder() {
        return new Builder();
    }

    /** The init method URL. */
    public String initMethod() {
        return initMethod;
    }

    /** The rank given explicitly, if any. */
    public OptionalInt rank() {
        return rank;
    }

    /** The world size given explicitly, if any. */
    public OptionalInt worldSize() {
        return worldSize;
    }

    /** Used to connect and as the store's default timeout. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Resolves rank and world size, then creates the store: on rank 0 of a TCP rendezvous this
     * starts the server, on other ranks it connects (waiting up to the timeout for rank 0).
     *
     * @throws RpcException INVALID_ARGUMENT for a bad URL or missing/invalid rank, world size or
     *     environment variable; RENDEZVOUS_FAILED if the server cannot start or be reached
     */
    public RendezvousResult connect() {
        StoreProviders providers = StoreProviders.load();
        InitMethodUrl url = InitMethodUrl.parse(initMethod, providers.schemes());
        Settings settings = new Settings(url.scheme());
        Store store = switch (url.scheme()) {
            case "env" -> {
                int r = settings.resolve("rank", rank, url, "RANK");
                int n = settings.resolve("world_size", worldSize, url, "WORLD_SIZE");
                settings.checkRank(r, n);
                String host = settings.env("MASTER_ADDR");
                int port = settings.port(settings.env("MASTER_PORT"), "environment variable MASTER_PORT");
                // As torchrun's: the launcher serves the store, so no worker holds it (a restarted
                // rank 0 finds it still there).
                boolean agentStore = "True".equals(environment.get(USE_AGENT_STORE));
                yield tcp(host, port, agentStore ? -1 : r);
            }
            case "tcp" -> {
                if (url.port() < 0) {
                    throw settings.error("port number missing");
                }
                int r = settings.resolve("rank", rank, url, null);
                int n = settings.resolve("world_size", worldSize, url, null);
                settings.checkRank(r, n);
                yield tcp(url.host(), url.port(), r);
            }
            case "file" -> {
                if (url.path().isEmpty()) {
                    throw settings.error("path missing");
                }
                int r = settings.resolve("rank", rank, url, null);
                int n = settings.resolve("world_size", worldSize, url, null);
                settings.checkRank(r, n);
                // deleted once every worker has closed it, as c10d's FileStore(path, world_size);
                // a world without a fixed size (0) keeps it
                yield n == 0 ? FileStore.open(Path.of(url.path()), timeout) : FileStore.open(Path.of(url.path()), timeout, n);
            }
            default -> {
                // A provider's store (etcd://, zookeeper://): no process is special, so rank and
                // world size may come from the environment as with env:// (launchers, schedulers).
                int r = settings.resolve("rank", rank, url, "RANK");
                int n = settings.resolve("world_size", worldSize, url, "WORLD_SIZE");
                settings.checkRank(r, n);
                yield providers.forScheme(url.scheme()).open(StoreAddress.parse(initMethod), timeout);
            }
        };
        RendezvousResult result = new RendezvousResult(store, settings.rank, settings.worldSize, initMethod);
        log.debug("Rendezvous complete: {}", result);
        return result;
    }

    /** {@code rank} -1: a client whatever the rank (the launcher serves the store). */
    private Store tcp(String host, int port, int rank) {
        if (rank == 0) {
            NetworkExposure.checkListen("rank 0's rendezvous store", host, authToken != null || tls != null,
                    allowUnauthenticatedNetwork);
        }
        return TcpStore.create(TcpStoreOptions.builder()
                .host(host).port(port).server(rank == 0).timeout(timeout).authToken(authToken).tls(tls)
                .stallTimeout(stallTimeout).authTimeout(authTimeout).build());
    }

    /** Resolves one connect() call's settings and words its errors as PyTorch does. */
    private final class Settings {
        private final String scheme;
        private int rank = -1;
        private int worldSize = -1;

        Settings(String scheme) {
            this.scheme = scheme;
        }

        RpcException error(String what) {
            return new RpcException(Code.INVALID_ARGUMENT,
                    "Error initializing Ferry using " + scheme + ":// rendezvous: " + what);
        }

        /** The argument, else the URL query parameter, else (env:// only) the environment variable. */
        int resolve(String name, OptionalInt argument, InitMethodUrl url, String envVar) {
            String fromQuery = url.query().get(name);
            Integer queried = fromQuery == null ? null : integer(fromQuery, "query parameter " + name);
            if (argument.isPresent() && queried != null && argument.getAsInt() != queried) {
                throw error("the URL sets " + name + "=" + queried + " but " + argument.getAsInt()
                        + " was passed; give it only once");
            }
            int value;
            if (argument.isPresent()) {
                value = argument.getAsInt();
            } else if (queried != null) {
                value = queried;
            } else if (envVar != null) {
                value = integer(env(envVar), "environment variable " + envVar);
            } else {
                throw error(("rank".equals(name) ? "rank" : "world size") + " parameter missing");
            }
            if ("rank".equals(name)) {
                rank = value;
            } else {
                worldSize = value;
            }
            return value;
        }

        void checkRank(int r, int n) {
            if (n < 0) {
                throw error("world size must be at least 1 (or 0: a world without a fixed size), got " + n);
            }
            if (n == 0 && r < 0) {
                throw error("rank must be at least 0, got " + r);
            }
            if (n > 0 && (r < 0 || r >= n)) {
                throw error("rank must be in [0, " + n + "), got " + r);
            }
        }

        String env(String name) {
            String value = environment.get(name);
            if (value == null || value.isBlank()) {
                throw error("environment variable " + name + " expected, but not set");
            }
            return value.strip();
        }

        int port(String text, String source) {
            int port = integer(text, source);
            if (port < 0 || port > 65535) {
                throw error(source + " must be a port in 0..65535, got " + port);
            }
            return port;
        }

        private int integer(String text, String source) {
            try {
                return Integer.parseInt(text.strip());
            } catch (NumberFormatException e) {
                throw error(source + " must be an integer, got '" + text + "'");
            }
        }
    }

    /** Builds a {@link Rendezvous}. Not thread-safe. */
    public static final class Builder {
        private String initMethod = DEFAULT_INIT_METHOD;
        private OptionalInt rank = OptionalInt.empty();
        private OptionalInt worldSize = OptionalInt.empty();
        private Duration timeout = DEFAULT_TIMEOUT;
        private Map<String, String> environment = System.getenv();
        private String authToken;
        private SSLContext tls;
        private boolean allowUnauthenticatedNetwork;
        private Duration stallTimeout = ConnectionLimits.DEFAULT_STALL_TIMEOUT;
        private Duration authTimeout = PeerAuthentication.DEFAULT_TIMEOUT;

        private Builder() {
        }

        /** Default {@value #DEFAULT_INIT_METHOD}. */
        public Builder initMethod(String initMethod) {
            this.initMethod = Objects.requireNonNull(initMethod, "initMethod");
            return this;
        }

        /**
         * This process's rank; if not set it comes from the URL query or (env://) {@code RANK}.
         * {@code -1}, PyTorch's default, means "not set".
         */
        public Builder rank(int rank) {
            this.rank = rank == -1 ? OptionalInt.empty() : OptionalInt.of(rank);
            return this;
        }

        /**
         * The number of processes; if not set it comes from the URL query or (env://) {@code
         * WORLD_SIZE}. {@code -1} means "not set".
         */
        public Builder worldSize(int worldSize) {
            this.worldSize = worldSize == -1 ? OptionalInt.empty() : OptionalInt.of(worldSize);
            return this;
        }

        /** Connect timeout and the store's default timeout; default {@link #DEFAULT_TIMEOUT}; ZERO: forever. */
        public Builder timeout(Duration timeout) {
            this.timeout = StoreArguments.timeout(timeout);
            return this;
        }

        /** The environment that env:// reads; default {@link System#getenv()}. Copied. */
        public Builder environment(Map<String, String> environment) {
            this.environment = Map.copyOf(environment);
            return this;
        }

        /**
         * The token a tcp:// or env:// store's server and clients prove to each other (the group's
         * {@code authToken}); default none. file:// stores rely on the file's permissions.
         */
        public Builder authToken(String token) {
            this.authToken = token;
            return this;
        }

        /**
         * The TLS context of a tcp:// or env:// store's connections (the group's {@code tls}); default
         * none. With it, what the store carries (worker names, ranks, addresses) is encrypted, and
         * only holders of a certificate the context trusts can connect.
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            return this;
        }

        /**
         * Whether rank 0 of a tcp:// or env:// rendezvous may serve the store on an address other than
         * loopback with neither {@link #authToken} nor {@link #tls}; default false: {@link Rendezvous#connect()}
         * refuses it with {@link Code#INVALID_ARGUMENT} (the group's {@code allowUnauthenticatedNetwork}).
         */
        public Builder allowUnauthenticatedNetwork(boolean allow) {
            this.allowUnauthenticatedNetwork = allow;
            return this;
        }

        /**
         * How long rank 0's tcp:// or env:// store lets a connection take to finish its handshake (the
         * group's {@code authTimeout}; {@link TcpStoreOptions#authTimeout()}).
         */
        public Builder authTimeout(Duration value) {
            this.authTimeout = Objects.requireNonNull(value, "authTimeout");
            return this;
        }

        /** How long rank 0's tcp:// or env:// store lets a client stall mid-frame ({@link TcpStoreOptions#stallTimeout()}). */
        public Builder stallTimeout(Duration value) {
            this.stallTimeout = Objects.requireNonNull(value, "stallTimeout");
            return this;
        }

        /** The immutable rendezvous; settings are checked by {@link Rendezvous#connect()}. */
        public Rendezvous build() {
            return new Rendezvous(this);
        }
    }
}
