package dev.ferry.rpc;

import java.io.Serializable;

/**
 * An {@link AsyncExecution} function of 4 arguments, returning a future whose value is what callers
 * want. Pass it through {@link Async#value}: {@code rpcSync} then returns {@code R},
 * {@code rpcAsync} an {@code RpcFuture<R>} and {@code remote} an {@code RRef<R>}, as PyTorch's calls
 * of an {@code async_execution} function give its future's value.
 *
 * @see Async
 */
@FunctionalInterface
public interface AsyncRpcFunction4<A, B, C, D, R> extends Serializable, AsyncRemoteFunction {
    RpcFuture<R> call(A a, B b, C c, D d) throws Exception;
}
