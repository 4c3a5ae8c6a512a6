package dev.ferry.rpc.store;

import dev.ferry.rpc.RpcException.Code;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.security.ConnectionLimits;
import dev.ferry.rpc.internal.security.PeerAuthentication;
import dev.ferry.rpc.internal.store.StoreArguments;
import java.time.Duration;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * Immutable options of a {@link TcpStore}: where the server is, whether this process hosts it, and
 * the default timeout (used to connect, and by blocking calls that give none).
 *
 * <pre>{@code
 * TcpStoreOptions options = TcpStoreOptions.builder()
 *         .host("10.0.0.1").port(29500)
 *         .server(rank == 0)
 *         .timeout(Duration.ofSeconds(60))
 *         .build();
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class TcpStoreOptions {
    /** c10d's default TCPStore timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);

    private final String host;
    private final int port;
    private final boolean server;
    private final Duration timeout;
    private final String authToken;
    private final SSLContext tls;
    private final Duration stallTimeout;
    private final Duration authTimeout;

    private TcpStoreOptions(Builder builder) {
        this.stallTimeout = builder.stallTimeout;
        this.authTimeout = builder.authTimeout;
        this.host = builder.host;
        this.port = builder.port;
        this.server = builder.server;
        this.timeout = builder.timeout;
        this.authToken = builder.authToken;
        this.tls = builder.tls;
    }

    /** A builder with host {@code 127.0.0.1}, no port, client only and {@link #DEFAULT_TIMEOUT}. */
    public static Builder builder() {
        return new Builder();
    }

    /** The server's host name or address; the server binds it, clients connect to it. */
    public String host() {
        return host;
    }

    /** The server's port; 0 (only with {@link #server()}) binds an ephemeral port. */
    public int port() {
        return port;
    }

    /** Whether this process starts the server (PyTorch's {@code is_master}, normally rank 0). */
    public boolean server() {
        return server;
    }

    /** How long to keep trying to connect, and the store's default wait timeout; ZERO: forever. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * The token the server and its clients prove to each other on every connection (as workers do,
     * see {@code RpcBackendOptions.authToken}); null: connections are not authenticated. Never printed.
     */
    public String authToken() {
        return authToken;
    }

    /**
     * The TLS context the server and its clients use on every connection (mutual TLS, as workers do,
     * see {@code RpcBackendOptions.tls}); null: plain TCP. Both ends must agree: a TLS client and a
     * plain server (or the reverse) fail to connect with UNAUTHENTICATED or at the timeout.
     */
    public SSLContext tls() {
        return tls;
    }

    /**
     * How long the server lets a client stall in the middle of a frame (less than 1 MiB of it, or no
     * frame finished, within this time twice in a row) before it closes the connection.
     */
    public Duration stallTimeout() {
        return stallTimeout;
    }

    /**
     * How long a connection may take to finish its handshake (its HELLO and, with a token, the
     * token's exchange) before the server closes it, and how long a client waits for the server's
     * part of it; with or without a token.
     */
    public Duration authTimeout() {
        return authTimeout;
    }

    /** A copy with a different {@link #timeout()}. */
    public TcpStoreOptions withTimeout(Duration timeout) {
        return toBuilder().timeout(timeout).build();
    }

    /** A builder starting from these options. */
    public Builder toBuilder() {
        return new Builder().host(host).port(port).server(server).timeout(timeout).authToken(authToken).tls(tls)
                .stallTimeout(stallTimeout).authTimeout(authTimeout);
    }

    @Override
    public String toString() {
        return "TcpStoreOptions[" + host + ":" + port + (server ? ", server" : "") + ", timeout=" + timeout
                + (authToken != null ? ", authenticated" : "") + (tls != null ? ", TLS" : "") + "]";
    }

    /** Builds {@link TcpStoreOptions}. Not thread-safe. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port = -1;
        private boolean server;
        private Duration timeout = DEFAULT_TIMEOUT;
        private String authToken;
        private SSLContext tls;
        private Duration stallTimeout = ConnectionLimits.DEFAULT_STALL_TIMEOUT;
        private Duration authTimeout = PeerAuthentication.DEFAULT_TIMEOUT;

        private Builder() {
        }

        /** Default 10 s, as the group's {@code authTimeout}; must be positive (see {@link TcpStoreOptions#authTimeout()}). */
        public Builder authTimeout(Duration value) {
            this.authTimeout = positive("authTimeout", value);
            return this;
        }

        /** Default 30 s; must be positive (see {@link TcpStoreOptions#stallTimeout()}). */
        public Builder stallTimeout(Duration value) {
            this.stallTimeout = positive("stallTimeout", value);
            return this;
        }

        private static Duration positive(String name, Duration value) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw new RpcException(Code.INVALID_ARGUMENT, name + " must be positive, got " + value);
            }
            return value;
        }

        /**
         * Default none (plain TCP). With a context, every connection is TLS: the server presents the
         * context's certificate and requires one from each client, and each side accepts only a peer
         * whose certificate chains to the context's trust store. Combine with {@link #authToken} as
         * workers do.
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            return this;
        }

        /**
         * Default none. With a token (16 characters or more), the server accepts only clients that
         * prove they hold it, and clients talk only to a server that proves it too.
         *
         * @throws RpcException INVALID_ARGUMENT if the token is shorter than 16 characters
         */
        public Builder authToken(String token) {
            if (token != null) {
                PeerAuthentication.of(token, PeerAuthentication.DEFAULT_TIMEOUT);
            }
            this.authToken = token;
            return this;
        }

        /** Default {@code 127.0.0.1}. */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** Required. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** Default false. */
        public Builder server(boolean server) {
            this.server = server;
            return this;
        }

        /** Default {@link #DEFAULT_TIMEOUT}; ZERO means forever. */
        public Builder timeout(Duration timeout) {
            this.timeout = StoreArguments.timeout(timeout);
            return this;
        }

        /**
         * @throws RpcException INVALID_ARGUMENT if the port is unset or out of range, or port 0 is
         *     given to a client (it cannot know which port the server got)
         */
        public TcpStoreOptions build() {
            if (host.isBlank()) {
                throw new RpcException(Code.INVALID_ARGUMENT, "TcpStore host must not be blank");
            }
            if (port < 0 || port > 65535) {
                throw new RpcException(Code.INVALID_ARGUMENT, port == -1
                        ? "TcpStore port is required"
                        : "TcpStore port must be in 0..65535, got " + port);
            }
            if (port == 0 && !server) {
                throw new RpcException(Code.INVALID_ARGUMENT,
                        "TcpStore port 0 (ephemeral) only makes sense for the server; clients need the real port");
            }
            return new TcpStoreOptions(this);
        }
    }
}
