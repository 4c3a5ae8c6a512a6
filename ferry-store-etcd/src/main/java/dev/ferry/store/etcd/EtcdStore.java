package dev.ferry.store.etcd;

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
 * A {@link Store} on etcd: the rendezvous of a job whose hosts already share an etcd cluster, so
 * no worker has to host the store and none is special. Keys live under a prefix (one per job);
 * {@link Store#setEphemeral} keys are attached to a lease this store keeps alive, so they are
 * deleted at {@link Store#close()} or, when the process dies, once the lease's time to live runs
 * out. Waits are etcd watches, not polls.
 *
 * <pre>{@code
 * try (Store store = EtcdStore.builder()
 *         .endpoint("10.0.0.5:2379")
 *         .prefix("/ferry/job-42")
 *         .connect()) {
 *     store.setEphemeral("alive/" + rank, host.getBytes(UTF_8));
 *     byte[] master = store.get("master");
 * }
 * // or, through init_method: RpcBackendOptions.builder().initMethod("etcd://10.0.0.5:2379/ferry/job-42")
 * }</pre>
 *
 * <p>Init method URL: {@code etcd://host:port[,host:port...][/prefix][?session_ttl_s=N]} (prefix
 * {@value #DEFAULT_PREFIX} if none). Values are limited by etcd's request size (1.5 MiB by
 * default); a larger one fails that call with {@code INVALID_ARGUMENT}. The connection is plain
 * gRPC without authentication: keep the etcd client port on a network only the job's hosts reach.
 * A request etcd does not answer within {@value EtcdBackend#REQUEST_TIMEOUT_SECONDS} s fails with
 * {@code UNAVAILABLE}.
 *
 * <p>The stores are thread-safe.
 */
public final class EtcdStore {
    /** The prefix of a URL or builder without one. */
    public static final String DEFAULT_PREFIX = "/ferry";
    /** How long after a process stopped keeping its lease alive its ephemeral keys go away. */
    public static final Duration DEFAULT_SESSION_TTL = Duration.ofSeconds(10);

    private EtcdStore() {
    }

    /** A builder with no endpoint, prefix {@value #DEFAULT_PREFIX}, the rendezvous timeout and a 10 s TTL. */
    public static Builder builder() {
        return new Builder();
    }

    /** Collects where the store is; not thread-safe. */
    public static final class Builder {
        private final List<String> endpoints = new ArrayList<>();
        private String prefix = DEFAULT_PREFIX;
        private Duration timeout = Rendezvous.DEFAULT_TIMEOUT;
        private Duration sessionTtl = DEFAULT_SESSION_TTL;

        private Builder() {
        }

        /** Adds an etcd member's client address, {@code host:port} (usually port 2379). */
        public Builder endpoint(String hostAndPort) {
            endpoints.add(Objects.requireNonNull(hostAndPort, "endpoint"));
            return this;
        }

        /** The key prefix, starting with {@code /}, e.g. {@code /ferry/job-42}: one per job. */
        public Builder prefix(String prefix) {
            this.prefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /** The store's default wait timeout, and how long {@link #connect()} waits for etcd; ZERO: forever. */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * The time to live of the lease behind ephemeral keys (whole seconds, at least 1; etcd may
         * raise it to its own minimum): how long a dead process's registrations outlive it.
         */
        public Builder sessionTtl(Duration ttl) {
            if (Objects.requireNonNull(ttl, "sessionTtl").toSeconds() < 1) {
                throw new RpcException(Code.INVALID_ARGUMENT, "etcd session TTL must be at least 1 s, got " + ttl);
            }
            this.sessionTtl = ttl;
            return this;
        }

        /**
         * Connects, waiting up to the timeout for etcd to answer.
         *
         * @throws RpcException INVALID_ARGUMENT without an endpoint or with a bad prefix;
         *     RENDEZVOUS_FAILED if etcd does not answer in time
         */
        public Store connect() {
            if (endpoints.isEmpty()) {
                throw new RpcException(Code.INVALID_ARGUMENT, "an etcd store needs at least one endpoint host:port");
            }
            if (!prefix.startsWith("/") || prefix.endsWith("/")) {
                throw new RpcException(Code.INVALID_ARGUMENT, "etcd store prefix must start with '/' and not end"
                        + " with one, got '" + prefix + "'");
            }
            return new BackedStore(EtcdBackend.connect(endpoints, prefix, sessionTtl, timeout), timeout);
        }
    }
}
