package dev.ferry.rpc;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * One worker of an RPC group: it calls functions on the other workers and runs theirs. Create one
 * with {@link Rpc#initRpc} (the process-wide agent of PyTorch's API) or {@link RpcAgents#start}
 * (an independent instance; several may live in one JVM). Close it with {@link #shutdown()}
 * (graceful: waits for the whole group) or {@link #close()}.
 *
 * <pre>{@code
 * try (RpcAgent agent = RpcAgents.start("worker0", 0, 2, options)) {
 *     int seven = agent.rpcSync("worker1", Ops::add, 3, 4);          // Ops: one of the application's classes
 *     RpcFuture<Integer> later = agent.to(1).rpcAsync(Ops::multiply, 6, 7);
 *     System.out.println(later.await());
 * } // graceful shutdown
 * }</pre>
 *
 * <p>Implementations are thread-safe. Calls made from inside a function running on this agent
 * (nested calls) never deadlock it, however many there are.
 */
public interface RpcAgent extends AutoCloseable {

    /** This worker's identity. */
    WorkerInfo getWorkerInfo();

    /**
     * This worker's incarnation in its group: the number it was given when it joined. A restarted
     * worker (a new process under the same name and id) gets a higher one than every earlier
     * incarnation of it; workers of one group never share one. Libraries whose messages carry ids a
     * worker makes (which start over when it restarts) send it along, so that a receiver can tell a
     * late message of an earlier incarnation from the current one's.
     */
    long getIncarnation();

    /** The worker named {@code name}; an {@link RpcException} if there is none. */
    WorkerInfo getWorkerInfo(String name);

    /** The worker whose id (rank) is {@code id}; an {@link RpcException} if there is none. */
    WorkerInfo getWorkerInfo(int id);

    /**
     * Every member of the group, this one included, ordered by id: the workers that joined and have
     * not left, without those this worker knows to be lost ({@link MembershipListener}).
     */
    List<WorkerInfo> getWorkerInfos();

    /** True from initialization until shutdown starts. */
    boolean isRunning();

    /** A target to call: the worker with this name. */
    default RpcTarget to(String name) {
        return new RpcTarget(this, getWorkerInfo(name));
    }

    /** A target to call: the worker with this id (rank). */
    default RpcTarget to(int id) {
        return new RpcTarget(this, getWorkerInfo(id));
    }

    /** A target to call: this worker. */
    default RpcTarget to(WorkerInfo worker) {
        return new RpcTarget(this, getWorkerInfo(worker.name()));
    }

    /**
     * The one primitive every call goes through: runs {@code function} with {@code args} on
     * {@code to}. A null {@code timeout} means the agent's default; {@link Duration#ZERO} none; a
     * negative one is refused. Failures to encode the arguments are thrown; everything later fails
     * the future.
     */
    <R> RpcFuture<R> invoke(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout);

    /**
     * As {@link #invoke}, waiting for the result ({@link RpcFuture#await()}): what
     * {@link RpcTarget#rpcSync} calls. It is {@code invoke(…).await()} in every way a program can
     * see: result, error codes and messages, timeout, what an interrupt does (the caller gives up,
     * the call goes on), and where the callee runs the call. Only its speed may differ: knowing
     * the caller waits for this call alone, a transport may let the calling thread read the answer
     * itself (Ferry's Netty transport: a synchronous-exchange lane).
     */
    default <R> R invokeAndWait(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout) {
        return this.<R>invoke(to, function, args, timeout).await();
    }

    /**
     * The primitive behind {@code remote}: runs {@code function} on {@code to}, whose result stays
     * there, and returns a reference to it at once. Errors of the function, or of making the call,
     * are raised by the first use of the reference.
     */
    <R> RRef<R> invokeRemote(WorkerInfo to, RemoteFunction function, Object[] args, Duration timeout);

    /**
     * Binds {@code function} to the worker {@code to} (tensorplay's {@code method_factory} /
     * {@code new_method}): that worker resolves the function once, now, checking that it may run
     * it, and the calls made through the result carry a short handle in place of the function's
     * reference. Programs use it through {@link RpcTarget#method} and {@link RRef#method}.
     * Waits for the worker's answer, within {@code timeout} (null: the agent's default).
     *
     * <p>This default, for agents of other backends, binds nothing: its calls go through
     * {@link #invoke} and carry the reference each time. Ferry's own agents bind.
     *
     * @throws RpcException {@link RpcException.Code#UNKNOWN_FUNCTION} if the worker cannot or may
     *                      not run the function: at once, not at the first call
     */
    default BoundFunction bind(WorkerInfo to, RemoteFunction function, Duration timeout) {
        return new ReferenceBoundFunction(this, getWorkerInfo(to.name()), function);
    }

    /** A reference to a local value, owned by this worker, to share with others (PyTorch's {@code RRef(value)}). */
    <T> RRef<T> rref(T value);

    /** Calls {@code function} on the worker named {@code to} and waits for the result. */
    default <R> R rpcSync(String to, RpcFunction0<R> function) {
        return to(to).rpcSync(function);
    }

    /** Calls {@code function} on the worker named {@code to}. */
    default <R> RpcFuture<R> rpcAsync(String to, RpcFunction0<R> function) {
        return to(to).rpcAsync(function);
    }

    /** Calls {@code function} on the worker named {@code to} and waits for the result. */
    default <A, R> R rpcSync(String to, RpcFunction1<A, R> function, A a) {
        return to(to).rpcSync(function, a);
    }

    /** Calls {@code function} on the worker named {@code to}. */
    default <A, R> RpcFuture<R> rpcAsync(String to, RpcFunction1<A, R> function, A a) {
        return to(to).rpcAsync(function, a);
    }

    /** Calls {@code function} on the worker named {@code to} and waits for the result. */
    default <A, B, R> R rpcSync(String to, RpcFunction2<A, B, R> function, A a, B b) {
        return to(to).rpcSync(function, a, b);
    }

    /** Calls {@code function} on the worker named {@code to}. */
    default <A, B, R> RpcFuture<R> rpcAsync(String to, RpcFunction2<A, B, R> function, A a, B b) {
        return to(to).rpcAsync(function, a, b);
    }

    /** Calls {@code function} on the worker named {@code to} and waits for the result. */
    default <A, B, C, R> R rpcSync(String to, RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return to(to).rpcSync(function, a, b, c);
    }

    /** Calls {@code function} on the worker named {@code to}. */
    default <A, B, C, R> RpcFuture<R> rpcAsync(String to, RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return to(to).rpcAsync(function, a, b, c);
    }

    /** Calls {@code function} on the worker named {@code to} and waits for the result. */
    default <A, B, C, D, R> R rpcSync(String to, RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return to(to).rpcSync(function, a, b, c, d);
    }

    /** Calls {@code function} on the worker named {@code to}. */
    default <A, B, C, D, R> RpcFuture<R> rpcAsync(String to, RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return to(to).rpcAsync(function, a, b, c, d);
    }

    /** Calls {@code function} on the worker named {@code to} and waits for the result. */
    default <A, B, C, D, E, R> R rpcSync(String to, RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return to(to).rpcSync(function, a, b, c, d, e);
    }

    /** Calls {@code function} on the worker named {@code to}. */
    default <A, B, C, D, E, R> RpcFuture<R> rpcAsync(String to, RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return to(to).rpcAsync(function, a, b, c, d, e);
    }

    /** Runs {@code function} on the worker named {@code to}, keeping the result there (PyTorch's {@code remote}). */
    default <R> RRef<R> remote(String to, RpcFunction0<R> function) {
        return to(to).remote(function);
    }

    /** Runs {@code function} on the worker named {@code to}, keeping the result there (PyTorch's {@code remote}). */
    default <A, R> RRef<R> remote(String to, RpcFunction1<A, R> function, A a) {
        return to(to).remote(function, a);
    }

    /** Runs {@code function} on the worker named {@code to}, keeping the result there (PyTorch's {@code remote}). */
    default <A, B, R> RRef<R> remote(String to, RpcFunction2<A, B, R> function, A a, B b) {
        return to(to).remote(function, a, b);
    }

    /** Runs {@code function} on the worker named {@code to}, keeping the result there (PyTorch's {@code remote}). */
    default <A, B, C, R> RRef<R> remote(String to, RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return to(to).remote(function, a, b, c);
    }

    /** Runs {@code function} on the worker named {@code to}, keeping the result there (PyTorch's {@code remote}). */
    default <A, B, C, D, R> RRef<R> remote(String to, RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return to(to).remote(function, a, b, c, d);
    }

    /** Runs {@code function} on the worker named {@code to}, keeping the result there (PyTorch's {@code remote}). */
    default <A, B, C, D, E, R> RRef<R> remote(String to, RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return to(to).remote(function, a, b, c, d, e);
    }

    /** The default timeout of calls made without one. */
    Duration getRpcTimeout();

    /**
     * Exposes {@code function} to calls by name ({@link RpcTarget#rpcSync(String, List, Map)}):
     * callers need only the name and values, none of this worker's classes, and what peers can
     * reach this way is exactly what the program registered. Arguments bind to the method's
     * parameters by position and by name, as Python binds them; the names are the method's own,
     * so its class must be compiled with {@code javac -parameters}. A caller without the classes
     * sends a record parameter as a map of its components (nested records as nested maps), and
     * numbers of another kind where their value fits; the elements of a {@code List}, {@code Set}
     * or {@code Map} parameter are checked against its declared type argument.
     *
     * <pre>{@code
     * agent.register("scale", Ops::scale, Map.of("factor", 2.0));   // static double scale(double x, double factor)
     * double six = (double) caller.rpcSync("worker1", "scale", List.of(3.0), Map.of());
     * double nine = (double) caller.rpcSync("worker1", "scale", List.of(), Map.of("x", 3.0, "factor", 3.0));
     * }</pre>
     *
     * @param function a static method reference or a method reference bound to its receiver, as
     *                 an {@code RpcFunction0..5} (the typed overloads take a method reference
     *                 directly); an {@link AsyncExecution} one answers with its future's value. Not a
     *                 lambda: javac keeps no parameter names for one, so its registration fails
     *                 saying so
     * @param defaults values of the parameters (by name) that a call may leave out: Java has no
     *                 default arguments, so they are given here, checked against the parameters' types
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} if the name is taken, the
     *                      parameter names were not compiled in, or a default names no parameter
     *                      or does not fit its type
     */
    void register(String name, RemoteFunction function, Map<String, ?> defaults);

    /** {@link #register(String, RemoteFunction, Map)} without defaults: every parameter is required. */
    default <R> void register(String name, RpcFunction0<R> function) {
        register(name, (RemoteFunction) function, Map.of());
    }

    /** {@link #register(String, RemoteFunction, Map)} for a function of 0 arguments. */
    default <R> void register(String name, RpcFunction0<R> function, Map<String, ?> defaults) {
        register(name, (RemoteFunction) function, defaults);
    }

    /** {@link #register(String, RemoteFunction, Map)} without defaults: every parameter is required. */
    default <A, R> void register(String name, RpcFunction1<A, R> function) {
        register(name, (RemoteFunction) function, Map.of());
    }

    /** {@link #register(String, RemoteFunction, Map)} for a function of 1 argument. */
    default <A, R> void register(String name, RpcFunction1<A, R> function, Map<String, ?> defaults) {
        register(name, (RemoteFunction) function, defaults);
    }

    /** {@link #register(String, RemoteFunction, Map)} without defaults: every parameter is required. */
    default <A, B, R> void register(String name, RpcFunction2<A, B, R> function) {
        register(name, (RemoteFunction) function, Map.of());
    }

    /** {@link #register(String, RemoteFunction, Map)} for a function of 2 arguments. */
    default <A, B, R> void register(String name, RpcFunction2<A, B, R> function, Map<String, ?> defaults) {
        register(name, (RemoteFunction) function, defaults);
    }

    /** {@link #register(String, RemoteFunction, Map)} without defaults: every parameter is required. */
    default <A, B, C, R> void register(String name, RpcFunction3<A, B, C, R> function) {
        register(name, (RemoteFunction) function, Map.of());
    }

    /** {@link #register(String, RemoteFunction, Map)} for a function of 3 arguments. */
    default <A, B, C, R> void register(String name, RpcFunction3<A, B, C, R> function, Map<String, ?> defaults) {
        register(name, (RemoteFunction) function, defaults);
    }

    /** {@link #register(String, RemoteFunction, Map)} without defaults: every parameter is required. */
    default <A, B, C, D, R> void register(String name, RpcFunction4<A, B, C, D, R> function) {
        register(name, (RemoteFunction) function, Map.of());
    }

    /** {@link #register(String, RemoteFunction, Map)} for a function of 4 arguments. */
    default <A, B, C, D, R> void register(String name, RpcFunction4<A, B, C, D, R> function, Map<String, ?> defaults) {
        register(name, (RemoteFunction) function, defaults);
    }

    /** {@link #register(String, RemoteFunction, Map)} without defaults: every parameter is required. */
    default <A, B, C, D, E, R> void register(String name, RpcFunction5<A, B, C, D, E, R> function) {
        register(name, (RemoteFunction) function, Map.of());
    }

    /** {@link #register(String, RemoteFunction, Map)} for a function of 5 arguments. */
    default <A, B, C, D, E, R> void register(String name, RpcFunction5<A, B, C, D, E, R> function, Map<String, ?> defaults) {
        register(name, (RemoteFunction) function, defaults);
    }

    /** Calls the function registered as {@code name} on the worker named {@code to} and waits for its result. */
    default Object rpcSync(String to, String name, List<?> args, Map<String, ?> kwargs) {
        return to(to).rpcSync(name, args, kwargs);
    }

    /** Calls the function registered as {@code name} on the worker named {@code to}. */
    default RpcFuture<Object> rpcAsync(String to, String name, List<?> args, Map<String, ?> kwargs) {
        return to(to).rpcAsync(name, args, kwargs);
    }

    /** Runs the function registered as {@code name} on the worker named {@code to}; the result stays there. */
    default RRef<Object> remote(String to, String name, List<?> args, Map<String, ?> kwargs) {
        return to(to).remote(name, args, kwargs);
    }

    /** Changes the default timeout for calls made from now on; calls in flight keep theirs. */
    void setRpcTimeout(Duration timeout);

    /**
     * Gathers one value from every worker: returns worker name to value, the same map on every
     * worker. Every worker must call it; calls line up in the order each worker makes them. A
     * worker that joined a running world (world size 0, or a restarted incarnation) did not see
     * the gathers before it, so it gets {@link RpcException.Code#ILLEGAL_STATE}: name the workers.
     */
    Map<String, Object> allGather(Object value);

    /** {@link #allGather} with a timeout instead of the default ({@link Duration#ZERO}: none). */
    Map<String, Object> allGather(Object value, Duration timeout);

    /**
     * {@link #allGather} among the workers named only (PyTorch's {@code _all_gather(obj,
     * worker_names)}): each of them calls it with the same names, the others take no part, and
     * gathers over different sets of workers do not wait for each other. Gathers over the same set
     * line up in the order each worker makes them.
     *
     * @throws RpcException {@link RpcException.Code#INVALID_ARGUMENT} if a name is unknown, the set
     *                      is empty, or this worker is not in it; {@link RpcException.Code#TIMEOUT}
     *                      if the others do not all come within {@code timeout}
     */
    Map<String, Object> allGather(Object value, Collection<String> workerNames, Duration timeout);

    /** Waits until every worker has called {@code barrier}. */
    default void barrier() {
        allGather(null);
    }

    /**
     * Waits until every worker named has called {@code barrier} with the same names (PyTorch's
     * {@code _barrier(worker_names)}), with the default timeout. This worker must be among them.
     * Unlike PyTorch's, a failed barrier throws instead of only logging.
     */
    default void barrier(Collection<String> workerNames) {
        allGather(null, workerNames, getRpcTimeout());
    }

    /** Graceful shutdown: {@code shutdown(true, Duration.ZERO)}. */
    default void shutdown() {
        shutdown(true, Duration.ZERO);
    }

    /**
     * Shuts this agent down. Graceful: waits until every worker has reached shutdown and all work
     * in the group (calls in flight anywhere, nested ones too) is done, then closes; {@code timeout}
     * bounds that wait ({@link Duration#ZERO}: none); workers known to be lost are not waited for.
     * A worker of a world without a fixed size (started with world size 0) leaves it instead: it
     * tells the members, which fail calls to it at once from then on, finishes the calls it has in
     * flight both ways, and closes; the others run on. Not graceful: closes at once, failing
     * pending calls with {@link RpcException.Code#SHUTDOWN}. Either way the agent is closed when
     * this returns, even when the graceful part failed (then the failure is thrown). Idempotent.
     */
    void shutdown(boolean graceful, Duration timeout);

    /** Graceful shutdown, for try-with-resources. */
    @Override
    default void close() {
        shutdown();
    }

    /**
     * Adds an observer of the application's calls made and run by this agent from now on (metrics,
     * profilers, tracing); closing the result removes it. Observers found by
     * {@link java.util.ServiceLoader} are added when the agent starts.
     */
    AutoCloseable addCallObserver(dev.ferry.rpc.spi.CallObserver observer);

    /**
     * Adds a listener of the group's membership (workers joining, leaving, lost) from now on;
     * closing the result removes it.
     */
    AutoCloseable addMembershipListener(MembershipListener listener);

    /** Counters and state for debugging: name to value, as PyTorch's {@code _get_debug_info}. */
    Map<String, String> getDebugInfo();
}
