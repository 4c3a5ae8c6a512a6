package dev.ferry.rpc;

import dev.ferry.rpc.internal.agent.CurrentAgent;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * PyTorch's {@code torch.distributed.rpc} module API, as static methods over the current agent:
 * the process-wide agent started by {@link #initRpc}, or, inside a function running on behalf of
 * a remote caller, the agent running it (so functions can make nested calls with
 * {@code Rpc.rpcSync(...)} whichever agent runs them, even with several agents in one JVM).
 *
 * <pre>{@code
 * Rpc.initRpc("worker0", 0, 2);               // blocks until worker1 has joined too
 * int seven = Rpc.rpcSync("worker1", Ops::add, 3, 4);     // Ops: one of the application's classes
 * RpcFuture<Integer> f = Rpc.rpcAsync("worker1", Ops::multiply, 6, 7);
 * Rpc.shutdown();                              // graceful: waits for worker1
 * }</pre>
 */
public final class Rpc {
    private static final Object LOCK = new Object();
    private static volatile RpcAgent global;
    /** The agent {@link #shutdown} last shut down, so that shutting down again is harmless. */
    private static RpcAgent shutDown;

    private Rpc() {
    }

    /** Starts the process-wide agent; rank and world size from {@code RANK} / {@code WORLD_SIZE}. */
    public static RpcAgent initRpc(String name) {
        return initRpc(name, BackendType.NETTY, -1, -1, RpcBackendOptions.defaults());
    }

    /** Starts the process-wide agent with the default backend and options. */
    public static RpcAgent initRpc(String name, int rank, int worldSize) {
        return initRpc(name, BackendType.NETTY, rank, worldSize, RpcBackendOptions.defaults());
    }

    /**
     * Starts the process-wide agent with the backend the options belong to
     * ({@link BackendType#NETTY} for {@link RpcBackendOptions}), as PyTorch infers it.
     */
    public static RpcAgent initRpc(String name, int rank, int worldSize, BackendOptions options) {
        return initRpc(name, RpcAgents.inferBackend(options), rank, worldSize, options);
    }

    /**
     * Starts the process-wide agent with {@code backend} and its default options
     * ({@link BackendRegistry#constructRpcBackendOptions(BackendType)}).
     */
    public static RpcAgent initRpc(String name, BackendType backend, int rank, int worldSize) {
        return initRpc(name, backend, rank, worldSize, BackendRegistry.constructRpcBackendOptions(backend));
    }

    /**
     * Starts the process-wide agent (PyTorch's {@code init_rpc}) with any registered backend. A
     * negative rank or world size is read from {@code RANK} / {@code WORLD_SIZE}; world size 0
     * joins a running world without a fixed size (see {@link RpcAgents#start}). Blocks until
     * every worker has joined.
     *
     * @throws RpcException {@link RpcException.Code#ILLEGAL_STATE} if RPC is already initialized
     *                      in this process; other codes for bad arguments or a failed rendezvous
     */
    public static RpcAgent initRpc(String name, BackendType backend, int rank, int worldSize, BackendOptions options) {
        synchronized (LOCK) {
            if (global != null) {
                throw new RpcException(RpcException.Code.ILLEGAL_STATE, "RPC is already initialized in this process"
                        + " (as " + global.getWorkerInfo().name() + "); shut it down before initializing again");
            }
            global = RpcAgents.start(name, backend, rank, worldSize, options);
            shutDown = null;
            return global;
        }
    }

    /** True: Ferry's RPC needs nothing beyond its jars. Use {@link #isInitialized()} for state. */
    public static boolean isAvailable() {
        return true;
    }

    /** Whether {@link #initRpc} started an agent that is still running. */
    public static boolean isInitialized() {
        RpcAgent agent = global;
        return agent != null && agent.isRunning();
    }

    /** The agent the static methods use; see the class description. */
    public static RpcAgent current() {
        RpcAgent handling = CurrentAgent.handling();
        if (handling != null) {
            return handling;
        }
        RpcAgent agent = global;
        if (agent == null) {
            throw new RpcException(RpcException.Code.NOT_INITIALIZED,
                    "RPC has not been initialized. Call Rpc.initRpc first.");
        }
        return agent;
    }

    public static WorkerInfo getWorkerInfo() {
        return current().getWorkerInfo();
    }

    public static WorkerInfo getWorkerInfo(String name) {
        return current().getWorkerInfo(name);
    }

    public static WorkerInfo getWorkerInfo(int id) {
        return current().getWorkerInfo(id);
    }

    public static List<WorkerInfo> getWorkerInfos() {
        return current().getWorkerInfos();
    }

    /** A target on the current agent: a worker by name. */
    public static RpcTarget to(String name) {
        return current().to(name);
    }

    /** A target on the current agent: a worker by id (rank). */
    public static RpcTarget to(int id) {
        return current().to(id);
    }

    /** A target on the current agent. */
    public static RpcTarget to(WorkerInfo worker) {
        return current().to(worker);
    }

    /** {@link RpcAgent#rpcSync} on the current agent. */
    public static <R> R rpcSync(String to, RpcFunction0<R> function) {
        return current().rpcSync(to, function);
    }

    /** {@link RpcAgent#rpcAsync} on the current agent. */
    public static <R> RpcFuture<R> rpcAsync(String to, RpcFunction0<R> function) {
        return current().rpcAsync(to, function);
    }

    /** {@link RpcAgent#rpcSync} on the current agent. */
    public static <A, R> R rpcSync(String to, RpcFunction1<A, R> function, A a) {
        return current().rpcSync(to, function, a);
    }

    /** {@link RpcAgent#rpcAsync} on the current agent. */
    public static <A, R> RpcFuture<R> rpcAsync(String to, RpcFunction1<A, R> function, A a) {
        return current().rpcAsync(to, function, a);
    }

    /** {@link RpcAgent#rpcSync} on the current agent. */
    public static <A, B, R> R rpcSync(String to, RpcFunction2<A, B, R> function, A a, B b) {
        return current().rpcSync(to, function, a, b);
    }

    /** {@link RpcAgent#rpcAsync} on the current agent. */
    public static <A, B, R> RpcFuture<R> rpcAsync(String to, RpcFunction2<A, B, R> function, A a, B b) {
        return current().rpcAsync(to, function, a, b);
    }

    /** {@link RpcAgent#rpcSync} on the current agent. */
    public static <A, B, C, R> R rpcSync(String to, RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return current().rpcSync(to, function, a, b, c);
    }

    /** {@link RpcAgent#rpcAsync} on the current agent. */
    public static <A, B, C, R> RpcFuture<R> rpcAsync(String to, RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return current().rpcAsync(to, function, a, b, c);
    }

    /** {@link RpcAgent#rpcSync} on the current agent. */
    public static <A, B, C, D, R> R rpcSync(String to, RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return current().rpcSync(to, function, a, b, c, d);
    }

    /** {@link RpcAgent#rpcAsync} on the current agent. */
    public static <A, B, C, D, R> RpcFuture<R> rpcAsync(String to, RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return current().rpcAsync(to, function, a, b, c, d);
    }

    /** {@link RpcAgent#rpcSync} on the current agent. */
    public static <A, B, C, D, E, R> R rpcSync(String to, RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return current().rpcSync(to, function, a, b, c, d, e);
    }

    /** {@link RpcAgent#rpcAsync} on the current agent. */
    public static <A, B, C, D, E, R> RpcFuture<R> rpcAsync(String to, RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return current().rpcAsync(to, function, a, b, c, d, e);
    }
    /** {@link RpcAgent#remote} on the current agent. */
    public static <R> RRef<R> remote(String to, RpcFunction0<R> function) {
        return current().remote(to, function);
    }

    /** {@link RpcAgent#remote} on the current agent. */
    public static <A, R> RRef<R> remote(String to, RpcFunction1<A, R> function, A a) {
        return current().remote(to, function, a);
    }

    /** {@link RpcAgent#remote} on the current agent. */
    public static <A, B, R> RRef<R> remote(String to, RpcFunction2<A, B, R> function, A a, B b) {
        return current().remote(to, function, a, b);
    }

    /** {@link RpcAgent#remote} on the current agent. */
    public static <A, B, C, R> RRef<R> remote(String to, RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return current().remote(to, function, a, b, c);
    }

    /** {@link RpcAgent#remote} on the current agent. */
    public static <A, B, C, D, R> RRef<R> remote(String to, RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return current().remote(to, function, a, b, c, d);
    }

    /** {@link RpcAgent#remote} on the current agent. */
    public static <A, B, C, D, E, R> RRef<R> remote(String to, RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return current().remote(to, function, a, b, c, d, e);
    }

    /** {@link RpcAgent#rref} on the current agent. */
    public static <T> RRef<T> rref(T value) {
        return current().rref(value);
    }

    public static Duration getRpcTimeout() {
        return current().getRpcTimeout();
    }

    public static void setRpcTimeout(Duration timeout) {
        current().setRpcTimeout(timeout);
    }

    /** Registers {@code function} as {@code name} on the current agent; see {@link RpcAgent#register(String, RemoteFunction, Map)}. */
    public static <R> void register(String name, RpcFunction0<R> function) {
        current().register(name, function, Map.of());
    }

    /** Registers {@code function} as {@code name}, with defaults for the parameters calls may leave out. */
    public static <R> void register(String name, RpcFunction0<R> function, Map<String, ?> defaults) {
        current().register(name, function, defaults);
    }

    /** Registers {@code function} as {@code name} on the current agent; see {@link RpcAgent#register(String, RemoteFunction, Map)}. */
    public static <A, R> void register(String name, RpcFunction1<A, R> function) {
        current().register(name, function, Map.of());
    }

    /** Registers {@code function} as {@code name}, with defaults for the parameters calls may leave out. */
    public static <A, R> void register(String name, RpcFunction1<A, R> function, Map<String, ?> defaults) {
        current().register(name, function, defaults);
    }

    /** Registers {@code function} as {@code name} on the current agent; see {@link RpcAgent#register(String, RemoteFunction, Map)}. */
    public static <A, B, R> void register(String name, RpcFunction2<A, B, R> function) {
        current().register(name, function, Map.of());
    }

    /** Registers {@code function} as {@code name}, with defaults for the parameters calls may leave out. */
    public static <A, B, R> void register(String name, RpcFunction2<A, B, R> function, Map<String, ?> defaults) {
        current().register(name, function, defaults);
    }

    /** Registers {@code function} as {@code name} on the current agent; see {@link RpcAgent#register(String, RemoteFunction, Map)}. */
    public static <A, B, C, R> void register(String name, RpcFunction3<A, B, C, R> function) {
        current().register(name, function, Map.of());
    }

    /** Registers {@code function} as {@code name}, with defaults for the parameters calls may leave out. */
    public static <A, B, C, R> void register(String name, RpcFunction3<A, B, C, R> function, Map<String, ?> defaults) {
        current().register(name, function, defaults);
    }

    /** Registers {@code function} as {@code name} on the current agent; see {@link RpcAgent#register(String, RemoteFunction, Map)}. */
    public static <A, B, C, D, R> void register(String name, RpcFunction4<A, B, C, D, R> function) {
        current().register(name, function, Map.of());
    }

    /** Registers {@code function} as {@code name}, with defaults for the parameters calls may leave out. */
    public static <A, B, C, D, R> void register(String name, RpcFunction4<A, B, C, D, R> function, Map<String, ?> defaults) {
        current().register(name, function, defaults);
    }

    /** Registers {@code function} as {@code name} on the current agent; see {@link RpcAgent#register(String, RemoteFunction, Map)}. */
    public static <A, B, C, D, E, R> void register(String name, RpcFunction5<A, B, C, D, E, R> function) {
        current().register(name, function, Map.of());
    }

    /** Registers {@code function} as {@code name}, with defaults for the parameters calls may leave out. */
    public static <A, B, C, D, E, R> void register(String name, RpcFunction5<A, B, C, D, E, R> function, Map<String, ?> defaults) {
        current().register(name, function, defaults);
    }

    /** Calls the function registered as {@code name} on {@code to}, by position and by name, and waits. */
    public static Object rpcSync(String to, String name, List<?> args, Map<String, ?> kwargs) {
        return current().rpcSync(to, name, args, kwargs);
    }

    /** Calls the function registered as {@code name} on {@code to}, by position and by name. */
    public static RpcFuture<Object> rpcAsync(String to, String name, List<?> args, Map<String, ?> kwargs) {
        return current().rpcAsync(to, name, args, kwargs);
    }

    /** Runs the function registered as {@code name} on {@code to}; the result stays there. */
    public static RRef<Object> remote(String to, String name, List<?> args, Map<String, ?> kwargs) {
        return current().remote(to, name, args, kwargs);
    }

    public static Map<String, Object> allGather(Object value) {
        return current().allGather(value);
    }

    public static void barrier() {
        current().barrier();
    }

    /**
     * Waits until every worker named has called {@code barrier} with the same names (PyTorch's
     * {@code _barrier(worker_names)}); workers not named take no part. The caller must be one of them.
     */
    public static void barrier(Collection<String> workerNames) {
        current().barrier(workerNames);
    }

    /** {@link #allGather} among the workers named only (see {@link RpcAgent#allGather(Object, Collection, Duration)}). */
    public static Map<String, Object> allGather(Object value, Collection<String> workerNames) {
        RpcAgent agent = current();
        return agent.allGather(value, workerNames, agent.getRpcTimeout());
    }

    /** Graceful shutdown of the process-wide agent. */
    public static void shutdown() {
        shutdown(true, Duration.ZERO);
    }

    /**
     * Shuts the process-wide agent down (see {@link RpcAgent#shutdown(boolean, Duration)});
     * afterwards {@link #initRpc} may be called again. Shutting down again, before the next
     * {@code initRpc}, does nothing, as for the agent itself.
     *
     * @throws RpcException {@link RpcException.Code#NOT_INITIALIZED} if {@link #initRpc} was never called
     */
    public static void shutdown(boolean graceful, Duration timeout) {
        RpcAgent agent;
        synchronized (LOCK) {
            agent = global;
            if (agent == null) {
                if (shutDown != null) {
                    return;
                }
                throw new RpcException(RpcException.Code.NOT_INITIALIZED,
                        "RPC has not been initialized. Call Rpc.initRpc first.");
            }
        }
        try {
            agent.shutdown(graceful, timeout);
        } finally {
            synchronized (LOCK) {
                if (global == agent) {
                    global = null;
                    shutDown = agent;
                }
            }
        }
    }
}
