package dev.ferry.rpc;

import dev.ferry.rpc.internal.agent.SystemCalls;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A worker to call, with the options of the calls made through it. Obtained from
 * {@link RpcAgent#to}; immutable, cheap, and safe to share between threads.
 *
 * <pre>{@code
 * int sum = agent.to(1).rpcSync(Ops::add, 3, 4);
 * RpcFuture<String> greeting = agent.to("worker2").withTimeout(Duration.ofSeconds(2))
 *         .rpcAsync(Greeter::greet, "ferry");
 * }</pre>
 */
public final class RpcTarget {
    /** What a call by name calls on the callee: Ferry's dispatcher to what it registered, with the name and values. */
    private static final RpcFunction3<String, List<Object>, Map<String, Object>, Object> BY_NAME =
            Async.value(SystemCalls::callByName);

    private final RpcAgent agent;
    private final WorkerInfo worker;
    private final Duration timeout;

    /** For agents: a target with the agent's default timeout. */
    public RpcTarget(RpcAgent agent, WorkerInfo worker) {
        this(agent, worker, null);
    }

    private RpcTarget(RpcAgent agent, WorkerInfo worker, Duration timeout) {
        this.agent = Objects.requireNonNull(agent, "agent");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.timeout = timeout;
    }

    /** The worker called. */
    public WorkerInfo worker() {
        return worker;
    }

    /**
     * This target with a per-call timeout instead of the agent's default; {@link Duration#ZERO}
     * means no timeout. A negative one fails each call made with it, {@link
     * RpcException.Code#INVALID_ARGUMENT}, before anything is sent (PyTorch's {@code timeout=-1},
     * "the default", is this target without {@code withTimeout}).
     */
    public RpcTarget withTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return new RpcTarget(agent, worker, timeout);
    }

    /**
     * Calls the function this target registered as {@code name} ({@link RpcAgent#register}) with
     * positional {@code args} and keyword {@code kwargs}, and waits for its result. Only the name
     * and the values travel. A missing, unknown or doubly given argument, or one of a type that does
     * not fit, fails with {@link RpcException.Code#INVALID_ARGUMENT} naming it; a name nothing is
     * registered as, with {@link RpcException.Code#UNKNOWN_FUNCTION}.
     */
    public Object rpcSync(String name, List<?> args, Map<String, ?> kwargs) {
        return agent.invokeAndWait(worker, BY_NAME, byName(name, args, kwargs), timeout);
    }

    /** {@link #rpcSync(String, List, Map)} without waiting. */
    public RpcFuture<Object> rpcAsync(String name, List<?> args, Map<String, ?> kwargs) {
        return agent.invoke(worker, BY_NAME, byName(name, args, kwargs), timeout);
    }

    /** {@link #rpcSync(String, List, Map)} whose result stays on this target: an RRef to it. */
    public RRef<Object> remote(String name, List<?> args, Map<String, ?> kwargs) {
        return agent.invokeRemote(worker, BY_NAME, byName(name, args, kwargs), timeout);
    }

    private static Object[] byName(String name, List<?> args, Map<String, ?> kwargs) {
        Objects.requireNonNull(name, "name");
        return new Object[] {name, args == null ? List.of() : new ArrayList<>(args),
            kwargs == null ? Map.of() : new LinkedHashMap<>(kwargs)};
    }

    /** Calls {@code function} on this target and waits for its result. */
    public <R> R rpcSync(RpcFunction0<R> function) {
        return agent.invokeAndWait(worker, function, new Object[] {}, timeout);
    }

    /** Calls {@code function} on this target; the future completes with its result. */
    public <R> RpcFuture<R> rpcAsync(RpcFunction0<R> function) {
        return agent.invoke(worker, function, new Object[] {}, timeout);
    }

    /** Calls {@code function} on this target and waits for its result. */
    public <A, R> R rpcSync(RpcFunction1<A, R> function, A a) {
        return agent.invokeAndWait(worker, function, new Object[] {a}, timeout);
    }

    /** Calls {@code function} on this target; the future completes with its result. */
    public <A, R> RpcFuture<R> rpcAsync(RpcFunction1<A, R> function, A a) {
        return agent.invoke(worker, function, new Object[] {a}, timeout);
    }

    /** Calls {@code function} on this target and waits for its result. */
    public <A, B, R> R rpcSync(RpcFunction2<A, B, R> function, A a, B b) {
        return agent.invokeAndWait(worker, function, new Object[] {a, b}, timeout);
    }

    /** Calls {@code function} on this target; the future completes with its result. */
    public <A, B, R> RpcFuture<R> rpcAsync(RpcFunction2<A, B, R> function, A a, B b) {
        return agent.invoke(worker, function, new Object[] {a, b}, timeout);
    }

    /** Calls {@code function} on this target and waits for its result. */
    public <A, B, C, R> R rpcSync(RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return agent.invokeAndWait(worker, function, new Object[] {a, b, c}, timeout);
    }

    /** Calls {@code function} on this target; the future completes with its result. */
    public <A, B, C, R> RpcFuture<R> rpcAsync(RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return agent.invoke(worker, function, new Object[] {a, b, c}, timeout);
    }

    /** Calls {@code function} on this target and waits for its result. */
    public <A, B, C, D, R> R rpcSync(RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return agent.invokeAndWait(worker, function, new Object[] {a, b, c, d}, timeout);
    }

    /** Calls {@code function} on this target; the future completes with its result. */
    public <A, B, C, D, R> RpcFuture<R> rpcAsync(RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return agent.invoke(worker, function, new Object[] {a, b, c, d}, timeout);
    }

    /** Calls {@code function} on this target and waits for its result. */
    public <A, B, C, D, E, R> R rpcSync(RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return agent.invokeAndWait(worker, function, new Object[] {a, b, c, d, e}, timeout);
    }

    /** Calls {@code function} on this target; the future completes with its result. */
    public <A, B, C, D, E, R> RpcFuture<R> rpcAsync(RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return agent.invoke(worker, function, new Object[] {a, b, c, d, e}, timeout);
    }

    /** Runs {@code function} on this target and keeps the result there: returns a reference to it at once. */
    public <R> RRef<R> remote(RpcFunction0<R> function) {
        return agent.invokeRemote(worker, function, new Object[] {}, timeout);
    }

    /** Runs {@code function} on this target and keeps the result there: returns a reference to it at once. */
    public <A, R> RRef<R> remote(RpcFunction1<A, R> function, A a) {
        return agent.invokeRemote(worker, function, new Object[] {a}, timeout);
    }

    /** Runs {@code function} on this target and keeps the result there: returns a reference to it at once. */
    public <A, B, R> RRef<R> remote(RpcFunction2<A, B, R> function, A a, B b) {
        return agent.invokeRemote(worker, function, new Object[] {a, b}, timeout);
    }

    /** Runs {@code function} on this target and keeps the result there: returns a reference to it at once. */
    public <A, B, C, R> RRef<R> remote(RpcFunction3<A, B, C, R> function, A a, B b, C c) {
        return agent.invokeRemote(worker, function, new Object[] {a, b, c}, timeout);
    }

    /** Runs {@code function} on this target and keeps the result there: returns a reference to it at once. */
    public <A, B, C, D, R> RRef<R> remote(RpcFunction4<A, B, C, D, R> function, A a, B b, C c, D d) {
        return agent.invokeRemote(worker, function, new Object[] {a, b, c, d}, timeout);
    }

    /** Runs {@code function} on this target and keeps the result there: returns a reference to it at once. */
    public <A, B, C, D, E, R> RRef<R> remote(RpcFunction5<A, B, C, D, E, R> function, A a, B b, C c, D d, E e) {
        return agent.invokeRemote(worker, function, new Object[] {a, b, c, d, e}, timeout);
    }

    /**
     * Binds {@code function} to this target to be called many times (tensorplay's
     * {@code method_factory} / {@code new_method}): the worker resolves and checks it once, now,
     * and each call through the result carries a short handle in place of the function's reference.
     * Waits for the worker's answer, with this target's timeout, which the calls keep.
     *
     * <pre>{@code
     * RemoteMethod2<Integer, Integer, Integer> add = agent.to("worker1").method(Ops::add);
     * int seven = add.rpcSync(3, 4);
     * }</pre>
     *
     * @throws RpcException {@link RpcException.Code#UNKNOWN_FUNCTION} if the worker cannot or may
     *                      not run the function
     */
    public <R> RemoteMethod0<R> method(RpcFunction0<R> function) {
        return new RemoteMethod0<>(agent.bind(worker, function, timeout), timeout);
    }

    /** Binds {@code function} to this target, to be called many times: see {@link #method(RpcFunction0)}. */
    public <A, R> RemoteMethod1<A, R> method(RpcFunction1<A, R> function) {
        return new RemoteMethod1<>(agent.bind(worker, function, timeout), timeout);
    }

    /** Binds {@code function} to this target, to be called many times: see {@link #method(RpcFunction0)}. */
    public <A, B, R> RemoteMethod2<A, B, R> method(RpcFunction2<A, B, R> function) {
        return new RemoteMethod2<>(agent.bind(worker, function, timeout), timeout);
    }

    /** Binds {@code function} to this target, to be called many times: see {@link #method(RpcFunction0)}. */
    public <A, B, C, R> RemoteMethod3<A, B, C, R> method(RpcFunction3<A, B, C, R> function) {
        return new RemoteMethod3<>(agent.bind(worker, function, timeout), timeout);
    }

    /** Binds {@code function} to this target, to be called many times: see {@link #method(RpcFunction0)}. */
    public <A, B, C, D, R> RemoteMethod4<A, B, C, D, R> method(RpcFunction4<A, B, C, D, R> function) {
        return new RemoteMethod4<>(agent.bind(worker, function, timeout), timeout);
    }

    /** Binds {@code function} to this target, to be called many times: see {@link #method(RpcFunction0)}. */
    public <A, B, C, D, E, R> RemoteMethod5<A, B, C, D, E, R> method(RpcFunction5<A, B, C, D, E, R> function) {
        return new RemoteMethod5<>(agent.bind(worker, function, timeout), timeout);
    }

    @Override
    public String toString() {
        return "RpcTarget(" + worker + (timeout == null ? "" : ", timeout=" + timeout) + ")";
    }
}
