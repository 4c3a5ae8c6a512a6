package dev.ferry.rpc;

import dev.ferry.rpc.store.Store;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The process-wide registry of RPC backends, PyTorch's {@code backend_registry} module. It holds
 * the built-in backends ({@link BackendType#NETTY}, also registered as {@code TENSORPIPE}, and
 * {@link BackendType#IN_PROCESS}) and any registered with {@link #registerBackend}. It is global on
 * purpose, as in PyTorch: a backend is code, the same for every agent of the JVM; agents
 * themselves stay independent instances.
 *
 * <pre>{@code
 * BackendType counting = BackendRegistry.registerBackend("COUNTING",
 *         (timeout, initMethod, extra) -> RpcBackendOptions.builder()
 *                 .rpcTimeout(timeout).initMethod(initMethod).build(),
 *         (store, name, rank, worldSize, options) -> new CountingAgent(
 *                 BackendRegistry.initBackend(BackendType.NETTY, store, name, rank, worldSize, options)));
 * RpcAgent agent = RpcAgents.start("worker0", counting, 0, 2, options);
 * }</pre>
 *
 * <p>This class is thread-safe. Backends cannot be unregistered.
 */
public final class BackendRegistry {
    private static final Map<String, BackendType> BACKENDS = new LinkedHashMap<>();

    static {
        BACKENDS.put(BackendType.NETTY.name(), BackendType.NETTY);
        BACKENDS.put("TENSORPIPE", BackendType.NETTY);
        BACKENDS.put(BackendType.IN_PROCESS.name(), BackendType.IN_PROCESS);
    }

    private BackendRegistry() {
    }

    /**
     * Registers a backend (PyTorch's {@code register_backend}) and returns its type.
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} "RPC backend NAME: already
     *                      registered" if the name is taken (built-in names included), or for a
     *                      blank name
     */
    public static BackendType registerBackend(String name, BackendValue.ConstructOptionsHandler constructOptionsHandler,
                                              BackendValue.InitBackendHandler initBackendHandler) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw invalid("an RPC backend name must not be blank");
        }
        BackendType type = new BackendType(name, new BackendValue(constructOptionsHandler, initBackendHandler));
        synchronized (BACKENDS) {
            if (BACKENDS.putIfAbsent(name, type) != null) {
                throw invalid("RPC backend " + name + ": already registered");
            }
        }
        return type;
    }

    /** Whether a backend of this name exists (PyTorch's {@code backend_registered}). */
    public static boolean backendRegistered(String name) {
        synchronized (BACKENDS) {
            return BACKENDS.containsKey(name);
        }
    }

    /** The backend called {@code name}; {@link RpcException.Code#INVALID_ARGUMENT} if there is none. */
    public static BackendType backend(String name) {
        BackendType type;
        synchronized (BACKENDS) {
            type = BACKENDS.get(name);
        }
        if (type == null) {
            throw invalid("no RPC backend named " + name + "; registered: " + backends());
        }
        return type;
    }

    /** Every registered backend, built-in ones first; an alias is not listed twice. */
    public static List<BackendType> backends() {
        synchronized (BACKENDS) {
            return List.copyOf(new LinkedHashSet<>(BACKENDS.values()));
        }
    }

    /** The backend's default options: 60 s timeout, {@code env://}. */
    public static BackendOptions constructRpcBackendOptions(BackendType backend) {
        return constructRpcBackendOptions(backend, RpcBackendOptions.DEFAULT_RPC_TIMEOUT, "env://", Map.of());
    }

    /** The backend's options with this timeout and init method. */
    public static BackendOptions constructRpcBackendOptions(BackendType backend, Duration rpcTimeout, String initMethod) {
        return constructRpcBackendOptions(backend, rpcTimeout, initMethod, Map.of());
    }

    /**
     * The backend's options (PyTorch's {@code construct_rpc_backend_options}): calls its options
     * handler. The built-in backends read {@code numWorkerThreads} (an Integer),
     * {@code deviceMaps} and {@code devices} from {@code extra} and ignore other keys, as PyTorch does.
     */
    public static BackendOptions constructRpcBackendOptions(BackendType backend, Duration rpcTimeout, String initMethod,
                                                            Map<String, ?> extra) {
        Objects.requireNonNull(backend, "backend");
        BackendOptions options = backend.value().constructOptionsHandler().construct(rpcTimeout, initMethod, extra);
        if (options == null) {
            throw invalid("the options handler of " + backend + " returned null");
        }
        return options;
    }

    /**
     * Starts an agent with the backend's init handler (PyTorch's {@code init_backend}); the agent
     * owns {@code store} from then on. {@link RpcAgents#start} calls this after rendezvous; call
     * it directly to decorate a backend, or to start an agent on a store of your own.
     */
    public static RpcAgent initBackend(BackendType backend, Store store, String name, int rank, int worldSize,
                                       BackendOptions options) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(options, "options");
        RpcAgent agent = backend.value().initBackendHandler().init(store, name, rank, worldSize, options);
        if (agent == null) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, "the init handler of " + backend + " returned no agent");
        }
        return agent;
    }

    private static RpcException invalid(String message) {
        return new RpcException(RpcException.Code.INVALID_ARGUMENT, message);
    }
}
