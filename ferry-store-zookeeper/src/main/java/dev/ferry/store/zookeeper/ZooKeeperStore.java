package dev.ferry.store.zookeeper;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.spi.BackedStore;
import dev.ferry.rpc.store.Rendezvous;
import dev.ferry.rpc.store.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A {@link Store} on ZooKeeper, through Apache Curator: the rendezvous of a job whose hosts already
 * share a ZooKeeper ensemble, so no worker has to host the store and none is special. Each key is
 * one znode under a path (one per job); {@link Store#setEphemeral} keys are ephemeral znodes of
 * this store's session, deleted at {@link Store#close()} or, when the process dies, once
 * ZooKeeper expires the session. Waits are ZooKeeper watches, not polls.
 *
 * <pre>{@code
 * try (Store store = ZooKeeperStore.builder()
 *         .connectString("zk1:2181,zk2:2181,zk3:2181")
 *         .path("/ferry/job-42")
 *         .connect()) {
 *     store.setEphemeral("alive/" + rank, host.getBytes(UTF_8));
 * }
 * // or, through init_method: RpcBackendOptions.builder().initMethod("zookeeper://zk1:2181,zk2:2181/ferry/job-42")
 * }</pre>
 *
 * <p>Init method URL: {@code zookeeper://host:port[,host:port...][/path][?session_timeout_ms=N]}
 * (path {@value #DEFAULT_PATH} if none). Values are limited to {@value ZooKeeperBackend#MAX_VALUE_BYTES}
 * bytes (ZooKeeper's default {@code jute.maxbuffer} is 1 MiB per request); a larger one fails that
 * call with {@code INVALID_ARGUMENT}. The connection is ZooKeeper's plain protocol without
 * authentication: keep the ensemble on a network only the job's hosts reach.
 *
 * <p>The stores are thread-safe.
 */
public final class ZooKeeperStore {
    /** The path of a URL or builder without one. */
    public static final String DEFAULT_PATH = "/ferry";
    /** How long ZooKeeper keeps a silent process's session, and so its ephemeral keys. */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);

    private ZooKeeperStore() {
    }

    /** A builder with no server, path {@value #DEFAULT_PATH}, the rendezvous timeout and a 10 s session. */
    public static Builder builder() {
        return new Builder();
    }

    /** Collects where the store is; not thread-safe. */
    public static final class Builder {
        private final List<String> servers = new ArrayList<>();
        private String path = DEFAULT_PATH;
        private Duration timeout = Rendezvous.DEFAULT_TIMEOUT;
        private Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;

        private Builder() {
        }

        /** Adds ensemble members, ZooKeeper's {@code host:port[,host:port...]}. */
        public Builder connectString(String servers) {
            for (String server : Objects.requireNonNull(servers, "servers").split(",")) {
                this.servers.add(server.strip());
            }
            return this;
        }

        /** The znode under which the keys live, e.g. {@code /ferry/job-42}: one per job. */
        public Builder path(String path) {
            this.path = Objects.requireNonNull(path, "path");
            return this;
        }

        /** The store's default wait timeout, and how long {@link #connect()} waits for ZooKeeper; ZERO: forever. */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * The session timeout asked of ZooKeeper (which bounds it by its own minimum and maximum,
         * 2 and 20 ticks): how long a dead process's ephemeral keys outlive it.
         */
        public Builder sessionTimeout(Duration timeout) {
            if (Objects.requireNonNull(timeout, "sessionTimeout").toMillis() < 1) {
                throw new RpcException(Code.INVALID_ARGUMENT, "ZooKeeper session timeout must be positive, got " + timeout);
            }
            this.sessionTimeout = timeout;
            return this;
        }

        /**
         * Connects, waiting up to the timeout for a session.
         *
         * @throws RpcException INVALID_ARGUMENT without a server or with a bad path;
         *     RENDEZVOUS_FAILED if no session is established in time
         */
        public Store connect() {
            if (servers.isEmpty()) {
                throw new RpcException(Code.INVALID_ARGUMENT, "a ZooKeeper store needs at least one server host:port");
            }
            if (!path.startsWith("/") || path.endsWith("/")) {
                throw new RpcException(Code.INVALID_ARGUMENT, "ZooKeeper store path must start with '/' and not end"
                        + " with one, got '" + path + "'");
            }
            return new BackedStore(ZooKeeperBackend.connect(String.join(",", servers), path, sessionTimeout, timeout),
                    timeout);
        }
    }
}
