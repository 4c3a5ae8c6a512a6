package dev.ferry.rpc;

import java.io.Serializable;

/**
 * A function of 1 argument that can be called on another worker: pass a method reference or
 * a lambda. It travels as a reference to the implementing method (its class, name and
 * signature), never as code, and is resolved on the callee, which must have the same class.
 * Values a lambda captures travel with it and must be serializable by Ferry.
 * <pre>{@code RpcFunction1<String, Integer> len = String::length; }</pre>
 *
 * @see RpcAgent#rpcSync
 */
@FunctionalInterface
public interface RpcFunction1<A, R> extends Serializable, RemoteFunction {
    R call(A a) throws Exception;
}
