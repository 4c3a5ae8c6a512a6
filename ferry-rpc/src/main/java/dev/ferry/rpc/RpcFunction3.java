package dev.ferry.rpc;

import java.io.Serializable;

/**
 * A function of 3 arguments that can be called on another worker: pass a method reference or
 * a lambda. It travels as a reference to the implementing method (its class, name and
 * signature), never as code, and is resolved on the callee, which must have the same class.
 * Values a lambda captures travel with it and must be serializable by Ferry.
 * 
 *
 * @see RpcAgent#rpcSync
 */
@FunctionalInterface
public interface RpcFunction3<A, B, C, R> extends Serializable, RemoteFunction {
    R call(A a, B b, C c) throws Exception;
}
