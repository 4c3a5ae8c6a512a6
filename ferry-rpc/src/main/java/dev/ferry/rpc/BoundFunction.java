package dev.ferry.rpc;

import java.time.Duration;

/**
 * A function bound to one worker: the primitive behind {@link RemoteMethod0} to
 * {@link RemoteMethod5}, which is what programs use ({@link RpcTarget#method}, {@link RRef#method}).
 * Made by {@link RpcAgent#bind}; its methods are those of {@link RpcAgent#invoke},
 * {@link RpcAgent#invokeAndWait} and {@link RpcAgent#invokeRemote} with the worker and function
 * fixed, and behave the same: same results, errors and timeouts.
 *
 * <p>Implementations are immutable and thread-safe.
 */
public interface BoundFunction {

    /** The worker the function runs on. */
    WorkerInfo worker();

    /** Runs the function with {@code args}; a null {@code timeout} means the agent's default, {@link Duration#ZERO} none. */
    <R> RpcFuture<R> invoke(Object[] args, Duration timeout);

    /** As {@link #invoke}, waiting for the result; an agent may take a faster path for it, as for {@link RpcAgent#invokeAndWait}. */
    default <R> R invokeAndWait(Object[] args, Duration timeout) {
        return this.<R>invoke(args, timeout).await();
    }

    /** Runs the function with {@code args}, keeping the result on the worker: a reference to it, at once. */
    <R> RRef<R> invokeRemote(Object[] args, Duration timeout);
}
