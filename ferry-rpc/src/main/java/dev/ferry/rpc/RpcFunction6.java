package dev.ferry.rpc;

import java.io.Serializable;

/**
 * A function of 6 arguments that can be called on another worker. Its use is a method of an
 * {@link RRef}'s value with 5 arguments ({@code rref.rpcSync(Type::method, a, b, c, d, e)}: the
 * value is the first), so that calls through an RRef take as many arguments as the top-level ones
 * ({@link RpcFunction5}). It travels as a reference to the implementing method, never as code.
 *
 * @see RRef#rpcSync(RpcFunction6, Object, Object, Object, Object, Object)
 */
@FunctionalInterface
public interface RpcFunction6<A, B, C, D, E, F, R> extends Serializable, RemoteFunction {
    R call(A a, B b, C c, D d, E e, F f) throws Exception;
}
