package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.AsyncExecution;
import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.internal.rref.ValueTypes;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.spi.HeaderKey;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Ferry's own remote functions: the all-gather protocol behind {@code allGather}, {@code barrier}
 * and graceful shutdown, and the RRef protocol's control messages. They travel like any function but carry {@link #MARKER}, so they are not
 * counted as application work when shutdown waits for the group to become idle.
 */
public final class SystemCalls {
    /** Header marking a call as Ferry's own. */
    static final HeaderKey<String> MARKER = HeaderKey.ofString("ferry-system");
    /** Header marking a system call that never blocks, run on the transport thread that reads it. */
    static final HeaderKey<String> INLINE = HeaderKey.ofString("ferry-inline");

    private SystemCalls() {
    }

    /**
     * Runs on the leader: records one worker's contribution to gather {@code id}; answers with
     * every member's value once all are in.
     */
    @AsyncExecution
    static RpcFuture<Map<String, Object>> gatherToLeader(String id, List<String> members, String name, Object value) {
        return agent().allGathers().contribute(id, members, name, value);
    }

    /**
     * Runs on a member the leader of gather {@code number} over {@code key} waits for: true once it
     * has started that gather, false if it began shutdown first.
     */
    @AsyncExecution
    static RpcFuture<Boolean> watchGather(String key, long number) {
        return agent().allGathers().watch(key, number);
    }

    /** Runs on every member: {@code name}'s incarnation {@code incarnation} leaves the group. */
    static Boolean memberLeft(String name, long incarnation) {
        agent().departed(name, incarnation);
        return Boolean.TRUE;
    }

    /**
     * A call by name ({@code rpcSync(to, name, args, kwargs)}): runs the function this worker
     * registered as {@code name}, its future's value the answer. An application call, not one of
     * Ferry's protocol: it is sent and counted as the application's.
     */
    @AsyncExecution
    public static RpcFuture<Object> callByName(String name, List<Object> args, Map<String, Object> kwargs)
            throws Exception {
        return agent().namedCalls().call(name, args, kwargs);
    }

    /**
     * Binds a function for a caller ({@link BoundFunctions}): resolves it here, as a call of it
     * would, and answers the handle its calls may carry instead of its identity.
     */
    static Integer bindFunction(String className, String methodName, String descriptor, int kind) {
        return agent().bindForPeer(new FunctionRef(className, methodName, descriptor, kind, null));
    }

    private static DefaultRpcAgent agent() {
        if (CurrentAgent.handling() instanceof DefaultRpcAgent agent) {
            return agent;
        }
        throw new RpcException(RpcException.Code.ILLEGAL_STATE, "system call outside of a Ferry request handler");
    }

    /** This worker's spans of an {@link dev.ferry.rpc.RpcProfiler}'s profile, for the profiler at its close. */
    static Object[] profileSpans(String id) {
        DefaultRpcAgent agent = agent();
        return dev.ferry.rpc.internal.observe.ProfileRecorder.encode(agent.profileRecorder().take(id));
    }

    /** Does nothing: a carrier for headers the callee acts on when it reads them (RRef deletes). */
    static Boolean ack() {
        return Boolean.TRUE;
    }

    /** {@link #cancelCall}'s reference, which tells a cancel from Ferry's other calls ({@link Deliveries}). */
    static final FunctionRef CANCEL = dev.ferry.rpc.internal.serial.FunctionRefs.of(
            (dev.ferry.rpc.RpcFunction2<Long, Boolean, Boolean>) SystemCalls::cancelCall);

    /**
     * The caller cancelled its call {@code callId} ({@code RpcFuture.cancel}, or the call's deadline
     * passed there): stop that work here ({@link IncomingCalls#cancel}). A call not here is
     * remembered for a while, in case the cancel overtook it ({@link EarlyCancels}); for a call
     * answered already, that is all.
     */
    static Boolean cancelCall(long callId, boolean interrupt) {
        dev.ferry.rpc.WorkerInfo caller = IncomingCalls.systemCaller();
        if (caller != null) {
            agent().incomingCalls().cancel(caller, callId, interrupt);
        }
        return Boolean.TRUE;
    }

    static Boolean rrefForkRequest(int createdOn, long localId, int forkCreatedOn, long forkLocalId) {
        agent().rrefs().onForkRequest(new GloballyUniqueId(createdOn, localId),
                new GloballyUniqueId(forkCreatedOn, forkLocalId));
        return Boolean.TRUE;
    }

    static Boolean rrefChildAccept(int forkCreatedOn, long forkLocalId) {
        agent().rrefs().onChildAccept(new GloballyUniqueId(forkCreatedOn, forkLocalId));
        return Boolean.TRUE;
    }

    /** The owner's value for a user's {@code toHere()}, sent when the value is set. */
    @AsyncExecution
    static RpcFuture<Object> rrefFetch(int createdOn, long localId) {
        return agent().rrefs().valueForFetch(new GloballyUniqueId(createdOn, localId));
    }

    /** The name of the owner's value's class, for a user's {@code type()}, sent when the value is set. */
    @AsyncExecution
    static RpcFuture<String> rrefType(int createdOn, long localId) {
        return agent().rrefs().valueForFetch(new GloballyUniqueId(createdOn, localId)).thenApply(ValueTypes::nameOf);
    }

    /** Runs an interface method on the owner's value, for {@code RRef.proxy}. */
    @AsyncExecution
    static RpcFuture<Object> rrefInvokeInterface(RRef<?> rref, String type, String name, String descriptor,
                                                 Object[] args) throws Exception {
        if (!rref.isOwner()) {
            throw new RpcException(RpcException.Code.UNKNOWN_RREF, rref + " is not owned by " + agent().self().name());
        }
        Object result = agent().interfaceMethod(type, name, descriptor).invoke(rref.localValue(), args);
        if (result instanceof RpcFuture<?> future) {
            @SuppressWarnings("unchecked")
            RpcFuture<Object> pending = (RpcFuture<Object>) future;
            return pending;
        }
        if (result instanceof CompletionStage<?> stage) {
            return RpcFuture.fromCompletionStage(stage);
        }
        return RpcFuture.completed(result);
    }
}
