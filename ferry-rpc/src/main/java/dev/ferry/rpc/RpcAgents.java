package dev.ferry.rpc;

import dev.ferry.rpc.internal.agent.DefaultRpcAgent;
import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreOptions;

import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Starts independent {@link RpcAgent}s: PyTorch's {@code init_rpc} without the process-wide
 * state, so several agents can live in one JVM. {@link Rpc#initRpc} uses this too.
 *
 * <pre>{@code
 * RpcBackendOptions options = RpcBackendOptions.builder().initMethod("tcp://127.0.0.1:29500").build();
 * try (RpcAgent agent = RpcAgents.start("trainer", 0, 2, options)) {
 *     ...
 * }
 * }</pre>
 */
public final class RpcAgents {
    private static final Pattern VALID_NAME = Pattern.compile("[A-Za-z0-9_:\\-]+");
    private static final int MAX_NAME_LENGTH = 128;

    private RpcAgents() {
    }

    /** Starts an agent with the default backend; see {@link #start(String, BackendType, int, int, RpcBackendOptions)}. */
    public static RpcAgent start(String name, int rank, int worldSize, RpcBackendOptions options) {
        return start(name, BackendType.NETTY, rank, worldSize, options);
    }

    /**
     * Starts an agent and returns once every worker of the group has joined. A negative rank or
     * world size is read from the environment ({@code RANK}, {@code WORLD_SIZE}).
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} for a bad name, rank or world
     *                      size; {@link RpcException.Code#RENDEZVOUS_FAILED} when the group does not
     *                      form (duplicate names or ranks, ranks missing at the timeout)
     */
    public static RpcAgent start(String name, BackendType backend, int rank, int worldSize, RpcBackendOptions options) {
        return start(name, backend, rank, worldSize, options, System.getenv());
    }

    static RpcAgent start(String name, BackendType backend, int rank, int worldSize, RpcBackendOptions options,
                          Map<String, String> env) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(backend, "backend");
        checkName(name);
        if (!backend.equals(BackendType.NETTY)) {
            throw invalid("unknown backend " + backend + "; Ferry has " + BackendType.NETTY);
        }
        int resolvedRank = rank >= 0 ? rank : fromEnv(env, "RANK");
        int resolvedWorldSize = worldSize > 0 ? worldSize : fromEnv(env, "WORLD_SIZE");
        if (resolvedWorldSize < 1) {
            throw invalid("world size must be at least 1, got " + resolvedWorldSize);
        }
        if (resolvedRank >= resolvedWorldSize) {
            throw invalid("rank " + resolvedRank + " is out of range for world size " + resolvedWorldSize
                    + " (ranks are 0 to " + (resolvedWorldSize - 1) + ")");
        }
        TcpStore store = connectStore(options, resolvedRank, env);
        return DefaultRpcAgent.start(new WorkerInfo(name, resolvedRank), resolvedWorldSize, options, store, store);
    }

    private static TcpStore connectStore(RpcBackendOptions options, int rank, Map<String, String> env) {
        String init = options.initMethod();
        String host;
        int port;
        if (init.startsWith("tcp://")) {
            String address = init.substring("tcp://".length());
            int colon = address.lastIndexOf(':');
            if (colon <= 0) {
                throw invalid("bad init method " + init + ": expected tcp://host:port");
            }
            host = address.substring(0, colon);
            port = parsePort(address.substring(colon + 1), init);
        } else if (init.equals("env://")) {
            host = env.get("MASTER_ADDR");
            if (host == null) {
                throw invalid("Error initializing Ferry RPC using env:// rendezvous: environment variable MASTER_ADDR expected, but not set");
            }
            String portText = env.get("MASTER_PORT");
            if (portText == null) {
                throw invalid("Error initializing Ferry RPC using env:// rendezvous: environment variable MASTER_PORT expected, but not set");
            }
            port = parsePort(portText, "MASTER_PORT");
        } else {
            throw invalid("unsupported init method " + init + "; use env://, tcp://host:port or file:///path");
        }
        return TcpStore.create(TcpStoreOptions.builder().host(host).port(port).server(rank == 0)
                .timeout(options.rendezvousTimeout()).build());
    }

    private static int parsePort(String text, String what) {
        try {
            return Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw invalid("bad port '" + text + "' in " + what);
        }
    }

    private static void checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw invalid("worker name must not be empty");
        }
        if (name.length() >= MAX_NAME_LENGTH) {
            throw invalid("worker name must be shorter than " + MAX_NAME_LENGTH + " characters, got " + name.length());
        }
        if (!VALID_NAME.matcher(name).matches()) {
            throw invalid("worker name '" + name + "' must match " + VALID_NAME.pattern());
        }
    }

    private static int fromEnv(Map<String, String> env, String variable) {
        String value = env.get(variable);
        if (value == null) {
            throw invalid("environment variable " + variable + " expected, but not set (or pass it to initRpc)");
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw invalid("environment variable " + variable + " must be an integer, got '" + value + "'");
        }
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
