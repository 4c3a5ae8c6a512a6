package dev.ferry.rpc;

import dev.ferry.rpc.internal.security.NetworkExposure;
import dev.ferry.rpc.store.PrefixStore;
import dev.ferry.rpc.store.Rendezvous;
import dev.ferry.rpc.store.RendezvousResult;
import dev.ferry.rpc.store.Store;

import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Starts independent {@link RpcAgent}s: PyTorch's {@code init_rpc} without the process-wide
 * state, so several agents can live in one JVM. {@link Rpc#initRpc} uses this too. The backend
 * is any registered {@link BackendType}; the default is {@link BackendType#NETTY}.
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

    /**
     * Starts an agent with the backend the options belong to: {@link BackendType#NETTY} for
     * {@link RpcBackendOptions} (PyTorch infers TensorPipe the same way); see
     * {@link #start(String, BackendType, int, int, BackendOptions)}.
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} "Could not infer backend for
     *                      options" for options of another type
     */
    public static RpcAgent start(String name, int rank, int worldSize, BackendOptions options) {
        return start(name, inferBackend(options), rank, worldSize, options);
    }

    /**
     * Starts an agent and returns once every worker of the group has joined: rendezvous through
     * the options' init method, then the backend's init handler
     * ({@link BackendRegistry#initBackend}) on the rendezvous store. A negative rank or world size
     * is read from the environment ({@code RANK}, {@code WORLD_SIZE}), and so are the options the
     * program left unset that {@link RpcBackendOptions} lists under "The environment".
     *
     * <p>World size 0 (PyTorch's {@code world_size=None}) joins a running world of any size, or
     * starts one if there is none, and returns once the members found are greeted; such a worker
     * leaves on graceful shutdown while the others run on. A worker started with the world's size
     * after that world formed (a restarted worker, under the name it had) joins it too, as a new
     * incarnation of itself. The others learn of joins, departures and losses through
     * {@link RpcAgent#addMembershipListener} and {@link RpcAgent#getWorkerInfos()}.
     *
     * <pre>{@code
     * RpcAgent joiner = RpcAgents.start("trainer7", 7, 0, options);   // joins the world at options' init method
     * ...
     * joiner.shutdown();                                             // leaves it
     * }</pre>
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} for a bad name, rank or world
     *                      size, or options the backend does not take;
     *                      {@link RpcException.Code#RENDEZVOUS_FAILED} when the group does not
     *                      form (duplicate names or ranks, ranks missing at the timeout)
     */
    public static RpcAgent start(String name, BackendType backend, int rank, int worldSize, BackendOptions options) {
        return start(name, backend, rank, worldSize, options, System.getenv());
    }

    static RpcAgent start(String name, BackendType backend, int rank, int worldSize, BackendOptions options,
                          Map<String, String> env) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(backend, "backend");
        checkName(name);
        if (options instanceof RpcBackendOptions rpcOptions) {
            options = FerryEnvironment.apply(rpcOptions, env);
        }
        if (rank < -1 || worldSize < -1) {
            throw invalid("rank must be -1 (from RANK) or at least 0 and world size -1 (from WORLD_SIZE), 0 (no fixed"
                    + " size) or at least 1; got rank " + rank + ", world size " + worldSize);
        }
        if (rank >= 0 && worldSize > 0 && rank >= worldSize) {
            throw invalid("rank " + rank + " is out of range for world size " + worldSize
                    + " (ranks are 0 to " + (worldSize - 1) + ")");
        }
        Rendezvous.Builder rendezvous = Rendezvous.builder()
                .initMethod(options.initMethod())
                .timeout(options.rendezvousTimeout())
                .environment(env);
        if (options instanceof RpcBackendOptions rpcOptions) {
            boolean authenticated = rpcOptions.authToken() != null || rpcOptions.tls() != null;
            if (backend == BackendType.NETTY) {
                NetworkExposure.checkListen("worker " + name, rpcOptions.listenHost(), authenticated,
                        rpcOptions.allowUnauthenticatedNetwork());
            }
            rendezvous.authToken(rpcOptions.authToken()).tls(rpcOptions.tls())
                    .allowUnauthenticatedNetwork(rpcOptions.allowUnauthenticatedNetwork())
                    .stallTimeout(rpcOptions.stallTimeout()).authTimeout(rpcOptions.authTimeout());
        }
        if (rank >= 0) {
            rendezvous.rank(rank);
        }
        if (worldSize >= 0) {
            rendezvous.worldSize(worldSize);
        }
        RendezvousResult joined = rendezvous.build().connect();
        if (joined.worldSize() > 0 && joined.rank() >= joined.worldSize()) {
            joined.close();
            throw invalid("rank " + joined.rank() + " is out of range for world size " + joined.worldSize()
                    + " (ranks are 0 to " + (joined.worldSize() - 1) + ")");
        }
        // Every worker of a group must use the same keys, so unlike PyTorch (one worker per
        // process) there is no per-process counter here; a file:// store must be fresh per group (the
        // last worker to leave deletes it; a crashed group leaves it behind).
        // Once the rendezvous worked: a worker that cannot even find its group has a better error to show.
        if (backend == BackendType.NETTY && options instanceof RpcBackendOptions rpcOptions) {
            NetworkExposure.warnIfUnauthenticated(name, rpcOptions.authToken() != null || rpcOptions.tls() != null);
        }
        Store store = new PrefixStore("rpc", joined.store());
        try {
            return BackendRegistry.initBackend(backend, store, name, joined.rank(), joined.worldSize(), options);
        } catch (RuntimeException | Error e) {
            joined.close(); // idempotent: the agent may have closed it already
            throw e;
        }
    }

    /** The backend whose options these are: PyTorch infers TensorPipe from its options type. */
    static BackendType inferBackend(BackendOptions options) {
        Objects.requireNonNull(options, "options");
        if (options instanceof RpcBackendOptions) {
            return BackendType.NETTY;
        }
        throw invalid("Could not infer backend for options " + options + "; pass the backend explicitly");
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

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
