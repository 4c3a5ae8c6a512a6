package dev.ferry.rpc;

import java.time.Duration;

/**
 * {@link RpcAgent#bind}'s default: the function is not bound on the worker, each call carries its
 * reference through the agent's primitives.
 */
record ReferenceBoundFunction(RpcAgent agent, WorkerInfo worker, RemoteFunction function) implements BoundFunction {

    @Override
    public <R> RpcFuture<R> invoke(Object[] args, Duration timeout) {
        return agent.invoke(worker, function, args, timeout);
    }

    @Override
    public <R> R invokeAndWait(Object[] args, Duration timeout) {
        return agent.invokeAndWait(worker, function, args, timeout);
    }

    @Override
    public <R> RRef<R> invokeRemote(Object[] args, Duration timeout) {
        return agent.invokeRemote(worker, function, args, timeout);
    }
}
