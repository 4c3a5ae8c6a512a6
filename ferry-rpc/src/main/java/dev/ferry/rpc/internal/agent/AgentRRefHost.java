package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.BoundFunction;
import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction2;
import dev.ferry.rpc.RpcFunction4;
import dev.ferry.rpc.RpcFunction5;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.rref.RRefHost;
import dev.ferry.rpc.internal.rref.ValueTypes;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.internal.serial.FunctionRefs;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;

import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * The agent's side of the RRef protocol: sends its control messages and the calls that create
 * RRefs or run methods on their values. Creation and receiver substitution ride on ordinary calls,
 * marked by header entries that {@link IncomingCalls} acts on:
 *
 * <pre>
 *   ferry-rref-create   = int32 createdOn, int64 localId, int32 forkCreatedOn, int64 forkLocalId   the result becomes that RRef's value
 *   ferry-rref-receiver = "1"                                            argument 0 (an RRef) is replaced by its value
 * </pre>
 */
final class AgentRRefHost implements RRefHost {
    static final HeaderKey<byte[]> CREATE = HeaderKey.of("ferry-rref-create", bytes -> bytes, bytes -> bytes);
    private static final int CREATE_BYTES = 2 * (4 + 8);
    static final HeaderKey<String> RECEIVER = HeaderKey.ofString("ferry-rref-receiver");

    static final RpcFunction4<Integer, Long, Integer, Long, Boolean> FORK_REQUEST = SystemCalls::rrefForkRequest;
    static final RpcFunction2<Integer, Long, Boolean> CHILD_ACCEPT = SystemCalls::rrefChildAccept;
    static final RpcFunction2<Integer, Long, RpcFuture<Object>> FETCH = SystemCalls::rrefFetch;
    private static final RpcFunction2<Integer, Long, RpcFuture<String>> TYPE = SystemCalls::rrefType;
    private static final RpcFunction5<RRef<?>, String, String, String, Object[], RpcFuture<Object>> INTERFACE_CALL =
            SystemCalls::rrefInvokeInterface;

    /** Proxy methods are resolved once: their descriptors are cached. */
    private static final java.util.Map<Method, String> DESCRIPTORS = new java.util.concurrent.ConcurrentHashMap<>();

    private final DefaultRpcAgent agent;

    AgentRRefHost(DefaultRpcAgent agent) {
        this.agent = agent;
    }

    @Override
    public WorkerInfo self() {
        return agent.self();
    }

    @Override
    public WorkerInfo worker(int id) {
        return agent.directory().byId(id);
    }

    @Override
    public boolean isLost(WorkerInfo peer) {
        return agent.isLost(peer);
    }

    @Override
    public long incarnation(WorkerInfo peer) {
        return agent.incarnationOf(peer);
    }

    @Override
    public RpcFuture<Object> sendForkRequest(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId) {
        return agent.invokeInline(owner, FORK_REQUEST,
                new Object[] {rrefId.createdOn(), rrefId.localId(), forkId.createdOn(), forkId.localId()}, null);
    }

    @Override
    public RpcFuture<Object> sendChildAccept(WorkerInfo parent, GloballyUniqueId forkId) {
        return agent.invokeInline(parent, CHILD_ACCEPT, new Object[] {forkId.createdOn(), forkId.localId()}, null);
    }

    @Override
    public RpcFuture<Object> sendUserDelete(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId,
                                            boolean again) {
        return agent.userDeletes().add(owner, rrefId, forkId, again);
    }

    @Override
    public void schedule(Runnable task, long delayNanos) {
        // a send may wait for room in a full send queue: never on the timer thread itself
        agent.schedule(() -> Thread.ofVirtual().name("ferry-rref-retry").start(task), delayNanos);
    }

    @Override
    @SuppressWarnings("unchecked")
    public RpcFuture<Object> fetch(WorkerInfo owner, GloballyUniqueId rrefId, Duration timeout) {
        RpcFuture<Object> call = agent.invokeInlineForApplication(owner, FETCH,
                new Object[] {rrefId.createdOn(), rrefId.localId()}, timeout);
        // the fetch function is asynchronous: its reply arrives as a completed future of the value
        RpcFuture<Object> value = call.thenCompose(reply -> (RpcFuture<Object>) reply);
        // failed before its answer (the RRef's creation failed meanwhile): the call is no longer waited for
        value.addDoneCallback(done -> {
            if (done.failed() && !call.done()) {
                call.cancel(false);
            }
        });
        return value;
    }

    @Override
    @SuppressWarnings("unchecked")
    public RpcFuture<Class<?>> fetchType(WorkerInfo owner, GloballyUniqueId rrefId, Duration timeout) {
        return agent.invokeInlineForApplication(owner, TYPE, new Object[] {rrefId.createdOn(), rrefId.localId()}, timeout)
                .thenCompose(answer -> (RpcFuture<Object>) answer)
                .thenApply(name -> ValueTypes.load((String) name, agent.classLoader(), owner, rrefId, agent.self()));
    }

    @Override
    public <R> RpcFuture<R> callOnValue(RRef<?> rref, RemoteFunction method, Object[] args, Duration timeout) {
        return callOnValue(rref, FunctionRefs.of(method), args, timeout);
    }

    <R> RpcFuture<R> callOnValue(RRef<?> rref, FunctionRef method, Object[] args, Duration timeout) {
        agent.rrefs().checkUsable(rref, "a call on its value");
        return agent.invokeWithHeaders(rref.owner(), method, args, timeout, CallHeaders.empty().with(RECEIVER, "1"));
    }

    /** As {@link #callOnValue}, then waits, as {@code rpcSync} does. */
    @Override
    public <R> R callOnValueAndWait(RRef<?> rref, RemoteFunction method, Object[] args, Duration timeout) {
        return callOnValueAndWait(rref, FunctionRefs.of(method), args, timeout);
    }

    <R> R callOnValueAndWait(RRef<?> rref, FunctionRef method, Object[] args, Duration timeout) {
        agent.rrefs().checkUsable(rref, "a call on its value");
        return agent.invokeWithHeadersAndWait(rref.owner(), method, args, timeout, CallHeaders.empty().with(RECEIVER, "1"));
    }

    @Override
    public <R> RRef<R> remoteOnValue(RRef<?> rref, RemoteFunction method, Object[] args, Duration timeout) {
        return remoteOnValue(rref, FunctionRefs.of(method), args, timeout);
    }

    <R> RRef<R> remoteOnValue(RRef<?> rref, FunctionRef method, Object[] args, Duration timeout) {
        agent.rrefs().checkUsable(rref, "a call on its value");
        return remote(rref.owner(), method, args, timeout, true);
    }

    @Override
    public BoundFunction bindOnValue(RRef<?> rref, RemoteFunction method, Duration timeout) {
        agent.rrefs().checkUsable(rref, "binding a method of its value");
        return new BoundFunctions.OnValue(this, rref, BoundFunctions.bind(agent, rref.owner(), method, timeout));
    }

    @Override
    public Object callInterfaceMethod(RRef<?> rref, Class<?> type, Method method, Object[] args, Duration timeout) {
        agent.rrefs().checkUsable(rref, "a call on its value");
        String descriptor = DESCRIPTORS.computeIfAbsent(method, m -> MethodType.methodType(m.getReturnType(),
                m.getParameterTypes()).toMethodDescriptorString());
        RpcFuture<Object> reply = agent.invokeWithHeaders(rref.owner(), FunctionRefs.of(INTERFACE_CALL),
                // the proxy's interface, not the method's declaring one: the owner's policy judges the
                // interface the application asked for, which may inherit the method from a JDK interface
                new Object[] {rref, type.getName(), method.getName(), descriptor, args},
                timeout, CallHeaders.empty());
        Object value = ((RpcFuture<?>) reply.await()).await();
        return FunctionRef.asDeclaredResult(descriptor, value);
    }

    /** Starts {@code remote()}: the reference is returned at once, its value made on the callee. */
    @SuppressWarnings("unchecked")
    <R> RRef<R> remote(WorkerInfo callee, FunctionRef function, Object[] args, Duration timeout, boolean onValue) {
        if (function.declaresFuture() && !function.futureValue()) {
            // The owner keeps the future's value, so an RRef typed by the future could only fail
            // where its value is used (PyTorch's RRef holds the value too).
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "remote() of " + function.displayName()
                    + ", which returns a future: its RRef would hold the future's value, not a future. Return an"
                    + " RpcFuture<T> and call remote() with Async.value(...): the RRef is then an RRef<T>");
        }
        GloballyUniqueId rrefId = agent.rrefs().nextId();
        boolean self = callee.equals(agent.self());
        GloballyUniqueId forkId = self ? rrefId : agent.rrefs().nextId();
        RRef<?> rref = self ? agent.rrefs().newSelfOwner(rrefId) : agent.rrefs().newCreatorUser(callee, rrefId, forkId);
        CallHeaders headers = CallHeaders.empty().with(CREATE, ByteBuffer.allocate(CREATE_BYTES)
                .putInt(rrefId.createdOn()).putLong(rrefId.localId())
                .putInt(forkId.createdOn()).putLong(forkId.localId()).array());
        if (onValue) {
            headers = headers.with(RECEIVER, "1");
        }
        RpcFuture<Object> created;
        try {
            created = agent.invokeWithHeaders(callee, function, args, timeout, headers);
        } catch (RpcException e) {
            agent.rrefs().creationAnswered(rref, e);
            throw e;
        }
        created.addDoneCallback(done -> agent.rrefs().creationAnswered(rref, done.failed() ? done.exceptionNow() : null));
        return (RRef<R>) rref;
    }

    /** Parses a {@link #CREATE} header: the RRef id and the fork id. */
    static GloballyUniqueId[] parseCreate(byte[] value) {
        if (value.length != CREATE_BYTES) {
            throw new RpcException(RpcException.Code.PROTOCOL_ERROR, "malformed RRef creation header: " + value.length
                    + " bytes, expected " + CREATE_BYTES);
        }
        ByteBuffer in = ByteBuffer.wrap(value);
        return new GloballyUniqueId[] {new GloballyUniqueId(in.getInt(), in.getLong()),
            new GloballyUniqueId(in.getInt(), in.getLong())};
    }
}
