package dev.ferry.rpc;

import dev.ferry.rpc.internal.rref.OwnerState;
import dev.ferry.rpc.internal.rref.RRefContext;
import dev.ferry.rpc.internal.rref.RRefFactory;
import dev.ferry.rpc.internal.rref.UserState;

import java.lang.ref.Reference;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A remote reference: a value that lives on one worker (its owner), usable from any worker of the
 * group (PyTorch's {@code RRef}). Create one with {@code remote(...)} (the value is made on the
 * callee) or {@link RpcAgent#rref} (a local value, to share); pass it in arguments and results of
 * calls, nested in collections and records too. The value lives as long as some worker holds a
 * reference to it, and no longer: Ferry counts references across the group.
 *
 * <pre>{@code
 * RRef<Counter> counter = agent.to("worker1").remote(Counter::new, 10);   // created on worker1
 * counter.rpcSync(Counter::add, 5);                  // runs counter.add(5) on worker1
 * int value = counter.rpcSync(Counter::value);       // 15
 * Counter copy = counter.toHere();                   // a copy of the value, here
 * agent.rpcSync("worker2", Ops::useCounter, counter); // worker2 gets its own reference
 * counter.close();                                   // release (the GC would, eventually)
 * }</pre>
 *
 * <p>Release references with {@link #close()} (try-with-resources); a reference that becomes
 * unreachable is released by the garbage collector as a safety net. An error or timeout while the
 * owner made the value is raised by the next use ({@link #toHere()}, a call, passing it on).
 * RRefs can only travel inside Ferry calls of the agent that made them.
 *
 * <p>This class is thread-safe.
 *
 * @param <T> the type of the referenced value
 */
public final class RRef<T> implements AutoCloseable {
    static {
        RRefFactory.setAccess(new RRefFactory.Access() {
            @Override
            public RRef<?> owner(RRefContext context, OwnerState state) {
                return new RRef<>(context, state, null);
            }

            @Override
            public RRef<?> user(RRefContext context, UserState state) {
                return new RRef<>(context, null, state);
            }

            @Override
            public Object stateOf(RRef<?> rref) {
                return rref.owned != null ? rref.owned : rref.user;
            }

            @Override
            public RRefContext contextOf(RRef<?> rref) {
                return rref.context;
            }
        });
    }

    private final RRefContext context;
    private final OwnerState owned;
    private final UserState user;
    /** The question of {@link #type()}, asked once it is asked; cleared if it fails. */
    private final AtomicReference<RpcFuture<Class<?>>> type = new AtomicReference<>();

    private RRef(RRefContext context, OwnerState owned, UserState user) {
        this.context = context;
        this.owned = owned;
        this.user = user;
    }

    /** A reference to a local value, owned by the current agent ({@link Rpc#current()}). */
    public static <T> RRef<T> of(T value) {
        return Rpc.current().rref(value);
    }

    RRefContext context() {
        return context;
    }

    /** True on the worker that owns the value. */
    public boolean isOwner() {
        return owned != null;
    }

    /** The worker that owns the value. */
    public WorkerInfo owner() {
        return owned != null ? context.self() : user.owner();
    }

    public String ownerName() {
        return owner().name();
    }

    /** The id of the referenced value, the same on every worker. */
    public GloballyUniqueId rrefId() {
        return owned != null ? owned.id() : user.rrefId();
    }

    /**
     * True once the owner knows of this reference (always on the owner). A reference received as
     * a call argument is always confirmed before the function runs.
     */
    public boolean confirmedByOwner() {
        return owned != null || context.isConfirmed(user);
    }

    /**
     * The value itself, on the owner: blocks until it has been made and rethrows the error that
     * making it raised. On any other worker this is an error; use {@link #toHere()}.
     */
    @SuppressWarnings("unchecked")
    public T localValue() {
        if (owned == null) {
            throw new RpcException(RpcException.Code.UNKNOWN_RREF, "For " + describeUser() + ", can't call localValue()"
                    + " on user " + context.self() + ". Call it on owner " + user.owner());
        }
        return (T) RRefContext.localValue(owned);
    }

    /**
     * A copy of the value, fetched from the owner with the default timeout (on the owner: the
     * value). A function that failed making the value fails this with the same
     * {@link RpcException.Code#REMOTE_ERROR} whether it ran on another worker or on this one.
     */
    public T toHere() {
        return toHere(null);
    }

    /** Like {@link #toHere()} with a timeout; {@link Duration#ZERO} means none. */
    @SuppressWarnings("unchecked")
    public T toHere(Duration timeout) {
        if (owned != null) {
            return (T) context.valueAsFetched(owned);
        }
        try {
            checkUsable("to_here()");
            T value;
            try {
                RpcFuture<Object> fetched = context.fetch(user, timeout);
                try {
                    value = (T) fetched.await();
                } finally {
                    context.fetchAnswered(user, fetched);
                }
            } catch (RpcException e) {
                if (user.confirmation().isDone()) {
                    // The creation's own failure is the news (a timed-out creation is cancelled on
                    // the owner, whose value then says only that).
                    context.checkMade(this, "to_here()");
                }
                throw e;
            }
            // The creator's own reference is confirmed by the creation call's answer, which may come
            // after the value: wait for it, so a failed or timed-out creation is reported here.
            RpcFuture.fromCompletionStage(user.confirmation()).await();
            context.checkMade(this, "to_here()");
            return value;
        } finally {
            // Compiled code may keep only this handle's fields while it waits; without the fence the
            // handle could be collected meanwhile and its Cleaner release the reference mid-call.
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The class of the value (PyTorch's {@code rref._get_type()}), asked of the owner with the
     * agent's default timeout once the value has been made; on the owner, the class of
     * {@link #localValue()}. A {@code null} value's class is {@link Void}. The answer is kept: later
     * calls on this handle ask no one. Only the class's name travels, and this worker loads it
     * without initializing it; the value itself is neither sent nor touched.
     *
     * <pre>{@code
     * RRef<Shape> shape = agent.to("worker1").remote(Shapes::random);
     * if (shape.type() == Circle.class) { ... }
     * }</pre>
     *
     * @throws RpcException {@link RpcException.Code#REMOTE_ERROR} if making the value failed;
     *                      {@link RpcException.Code#TIMEOUT} if the owner did not answer in time;
     *                      {@link RpcException.Code#SERIALIZATION_ERROR} if this worker cannot load
     *                      the owner's class (not on its class path, or a lambda's hidden class)
     */
    public Class<?> type() {
        return typeAsync(null).await();
    }

    /**
     * Like {@link #type()}, waiting at most {@code timeout} ({@link Duration#ZERO}: no limit). A
     * question already on its way (from {@link #typeAsync()}) is waited for, not asked again.
     */
    public Class<?> type(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        RpcFuture<Class<?>> known = type.get();
        RpcFuture<Class<?>> answer = typeAsync(timeout);
        // A question asked now carries the timeout itself; one asked before may have had another.
        return answer != known || timeout.isZero() ? answer.await() : answer.await(timeout);
    }

    /**
     * {@link #type()} without waiting. Every call returns the same future until it fails; after a
     * failure (a timeout, say) the next call asks the owner again.
     */
    public RpcFuture<Class<?>> typeAsync() {
        return typeAsync(null);
    }

    private RpcFuture<Class<?>> typeAsync(Duration timeout) {
        RpcFuture<Class<?>> known = type.get();
        if (known != null && !known.failed()) {
            return known;
        }
        checkUsable("type()");
        RpcFuture<Class<?>> answer = new RpcFuture<>();
        if (!type.compareAndSet(known, answer)) {
            return typeAsync(timeout); // another thread asks meanwhile: its question is this one's too
        }
        RpcFuture<Class<?>> asked;
        try {
            asked = owned != null ? context.valueType(owned) : context.host().fetchType(user.owner(), user.rrefId(), timeout);
        } catch (RuntimeException e) {
            type.compareAndSet(answer, null);
            throw e;
        }
        asked.addDoneCallback(done -> {
            if (done.failed()) {
                type.compareAndSet(answer, null); // before the failure is seen: whoever sees it may ask again
                answer.setException(done.exceptionNow());
            } else {
                answer.setResult(done.value());
            }
        });
        return answer;
    }

    /** Calls through this reference with a timeout instead of the agent's default. */
    public RRefCalls<T> withTimeout(Duration timeout) {
        return new RRefCalls<>(this, Objects.requireNonNull(timeout, "timeout"));
    }

    private RRefCalls<T> calls() {
        return new RRefCalls<>(this, null);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <R> R rpcSync(RpcFunction1<? super T, R> method) {
        return calls().rpcSync(method);
    }

    /** Runs {@code method} on the value where it lives. */
    public <R> RpcFuture<R> rpcAsync(RpcFunction1<? super T, R> method) {
        return calls().rpcAsync(method);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <R> RRef<R> remote(RpcFunction1<? super T, R> method) {
        return calls().remote(method);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, R> R rpcSync(RpcFunction2<? super T, A, R> method, A a) {
        return calls().rpcSync(method, a);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, R> RpcFuture<R> rpcAsync(RpcFunction2<? super T, A, R> method, A a) {
        return calls().rpcAsync(method, a);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, R> RRef<R> remote(RpcFunction2<? super T, A, R> method, A a) {
        return calls().remote(method, a);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, R> R rpcSync(RpcFunction3<? super T, A, B, R> method, A a, B b) {
        return calls().rpcSync(method, a, b);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, R> RpcFuture<R> rpcAsync(RpcFunction3<? super T, A, B, R> method, A a, B b) {
        return calls().rpcAsync(method, a, b);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, R> RRef<R> remote(RpcFunction3<? super T, A, B, R> method, A a, B b) {
        return calls().remote(method, a, b);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, C, R> R rpcSync(RpcFunction4<? super T, A, B, C, R> method, A a, B b, C c) {
        return calls().rpcSync(method, a, b, c);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, C, R> RpcFuture<R> rpcAsync(RpcFunction4<? super T, A, B, C, R> method, A a, B b, C c) {
        return calls().rpcAsync(method, a, b, c);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, C, R> RRef<R> remote(RpcFunction4<? super T, A, B, C, R> method, A a, B b, C c) {
        return calls().remote(method, a, b, c);
    }
    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, C, D, R> R rpcSync(RpcFunction5<? super T, A, B, C, D, R> method, A a, B b, C c, D d) {
        return calls().rpcSync(method, a, b, c, d);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, C, D, R> RpcFuture<R> rpcAsync(RpcFunction5<? super T, A, B, C, D, R> method, A a, B b, C c, D d) {
        return calls().rpcAsync(method, a, b, c, d);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, C, D, R> RRef<R> remote(RpcFunction5<? super T, A, B, C, D, R> method, A a, B b, C c, D d) {
        return calls().remote(method, a, b, c, d);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, C, D, E, R> R rpcSync(RpcFunction6<? super T, A, B, C, D, E, R> method, A a, B b, C c, D d, E e) {
        return calls().rpcSync(method, a, b, c, d, e);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, C, D, E, R> RpcFuture<R> rpcAsync(RpcFunction6<? super T, A, B, C, D, E, R> method,
                                                    A a, B b, C c, D d, E e) {
        return calls().rpcAsync(method, a, b, c, d, e);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, C, D, E, R> RRef<R> remote(RpcFunction6<? super T, A, B, C, D, E, R> method, A a, B b, C c, D d, E e) {
        return calls().remote(method, a, b, c, d, e);
    }

    /**
     * Binds {@code method} to the value, to be called many times, {@code obj.method(x)} style
     * (tensorplay's {@code method_factory} / {@code new_method}): the owner resolves and checks it
     * once, now, and each call through the result carries a short handle in place of the method's
     * reference. Waits for the owner's answer, with the agent's default timeout, which the calls keep
     * ({@link #withTimeout} for another).
     *
     * <pre>{@code
     * RemoteMethod1<Integer, Integer> add = counter.method(Counter::add);
     * for (int i = 0; i < 1000; i++) {
     *     add.rpcSync(1);                 // counter.add(1) where it lives
     * }
     * }</pre>
     *
     * @throws RpcException {@link RpcException.Code#UNKNOWN_FUNCTION} if the owner cannot or may
     *                      not run the method
     */
    public <R> RemoteMethod0<R> method(RpcFunction1<? super T, R> method) {
        return calls().method(method);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, R> RemoteMethod1<A, R> method(RpcFunction2<? super T, A, R> method) {
        return calls().method(method);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, R> RemoteMethod2<A, B, R> method(RpcFunction3<? super T, A, B, R> method) {
        return calls().method(method);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, C, R> RemoteMethod3<A, B, C, R> method(RpcFunction4<? super T, A, B, C, R> method) {
        return calls().method(method);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, C, D, R> RemoteMethod4<A, B, C, D, R> method(RpcFunction5<? super T, A, B, C, D, R> method) {
        return calls().method(method);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, C, D, E, R> RemoteMethod5<A, B, C, D, E, R> method(RpcFunction6<? super T, A, B, C, D, E, R> method) {
        return calls().method(method);
    }

    /**
     * A dynamic proxy implementing {@code type} whose methods run on the value where it lives,
     * synchronously (PyTorch's {@code rref.rpc_sync().method(...)}). The value must implement the
     * interface; each method is resolved once and may be called many times.
     *
     * <pre>{@code
     * CounterApi api = counter.proxy(CounterApi.class);
     * api.add(5);
     * }</pre>
     */
    public <I> I proxy(Class<I> type) {
        return proxy(type, null);
    }

    /** Like {@link #proxy(Class)}, each call with {@code timeout}. */
    public <I> I proxy(Class<I> type, Duration timeout) {
        if (!type.isInterface()) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, type.getName() + " is not an interface");
        }
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "toString" -> "Proxy(" + type.getSimpleName() + " of " + this + ")";
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                };
            }
            return context.host().callInterfaceMethod(this, type, method, args == null ? new Object[0] : args, timeout);
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
    }

    /** Throws the recorded creation failure, or a deleted-reference error, if there is one. */
    void checkUsable(String operation) {
        context.checkUsable(this, operation);
    }

    /**
     * Releases this reference: the owner is told once it has confirmed it and every reference
     * handed on from here has been accepted. Idempotent; a no-op on the owner's own handle.
     */
    @Override
    public void close() {
        if (user != null) {
            context.release(user);
        }
    }

    private String describeUser() {
        return "UserRRef(rref_id=" + user.rrefId() + ", fork_id=" + user.forkId() + ")";
    }

    @Override
    public String toString() {
        if (owned != null) {
            return "OwnerRRef(" + owned.id() + ")";
        }
        return "UserRRef(RRefId = " + user.rrefId() + ", ForkId = " + user.forkId() + ")";
    }
}
