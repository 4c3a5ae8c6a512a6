package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.BoundFunction;
import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RemoteFunction;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;

import java.lang.reflect.Method;
import java.time.Duration;

/**
 * What the RRef protocol needs from its agent: identities, and the three control messages, sent as
 * Ferry's own calls (not counted as application work).
 */
public interface RRefHost {
    WorkerInfo self();

    /** The worker with this id; an exception if there is none. */
    WorkerInfo worker(int id);

    /**
     * Whether {@code peer} is known to be gone for now: its connection closed or it went silent
     * and it was not heard since, or it is no longer a member. A control message to it is not sent
     * again.
     */
    boolean isLost(WorkerInfo peer);

    /**
     * The incarnation of {@code peer} while it is a member of the group (lost or not), or -1 once
     * it is not (it left): a message owed to an earlier incarnation, which restarted since, is not
     * sent to the new one.
     */
    long incarnation(WorkerInfo peer);

    /** To the owner: a user received fork {@code forkId} from another user. */
    RpcFuture<Object> sendForkRequest(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId);

    /** To the parent: the fork it sent is confirmed (or arrived at the owner). */
    RpcFuture<Object> sendChildAccept(WorkerInfo parent, GloballyUniqueId forkId);

    /**
     * To the owner: this user released its fork; {@code again} when this delete was sent before
     * (the owner may have it already, and then ignores it quietly).
     */
    RpcFuture<Object> sendUserDelete(WorkerInfo owner, GloballyUniqueId rrefId, GloballyUniqueId forkId,
                                     boolean again);

    /**
     * Runs {@code task} after {@code delayNanos} on a thread that may send (a control message sent
     * again after its send failed).
     */
    void schedule(Runnable task, long delayNanos);

    /**
     * Fetches a copy of the value of a user RRef from its owner ({@code toHere}). Failing the
     * returned future before it is answered ends the fetch here (the caller no longer waits for it).
     */
    RpcFuture<Object> fetch(WorkerInfo owner, GloballyUniqueId rrefId, Duration timeout);

    /**
     * Asks the owner for the class of a user RRef's value ({@code RRef.type()}) once the value is
     * set, and loads that class here.
     */
    RpcFuture<Class<?>> fetchType(WorkerInfo owner, GloballyUniqueId rrefId, Duration timeout);

    /** Runs {@code method} on the owner with the RRef's value as receiver: args[0] is the RRef. */
    <R> RpcFuture<R> callOnValue(RRef<?> rref, RemoteFunction method, Object[] args, Duration timeout);

    /**
     * As {@link #callOnValue}, waiting for the result: what {@code rref.rpcSync} calls. A host may
     * take a faster path for a call its caller waits for alone (Ferry's agent: a lane).
     */
    default <R> R callOnValueAndWait(RRef<?> rref, RemoteFunction method, Object[] args, Duration timeout) {
        return this.<R>callOnValue(rref, method, args, timeout).await();
    }

    /** Like {@link #callOnValue} but the result stays on the owner: an RRef to it. */
    <R> RRef<R> remoteOnValue(RRef<?> rref, RemoteFunction method, Object[] args, Duration timeout);

    /**
     * Binds {@code method} on the owner of {@code rref} ({@link dev.ferry.rpc.RpcAgent#bind}): the
     * result runs it on the value, the arguments its calls are given after the receiver.
     */
    BoundFunction bindOnValue(RRef<?> rref, RemoteFunction method, Duration timeout);

    /** Runs an interface method on the owner's value (dynamic proxies); waits for the result. */
    Object callInterfaceMethod(RRef<?> rref, Class<?> type, Method method, Object[] args, Duration timeout);
}
