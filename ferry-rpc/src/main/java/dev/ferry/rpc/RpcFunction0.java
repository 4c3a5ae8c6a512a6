package dev.ferry.rpc;

import java.io.Serializable;

/**
 * A function of 0 arguments that can be called on another worker: pass a method reference or
 * a lambda. It travels as a reference to the implementing method (its class, name and
 * signature), never as code, and is resolved on the callee, which must have the same class.
 * Values a lambda captures travel with it and must be serializable by Ferry.
 * <pre>{@code RpcFunction0<Long> now = System::nanoTime; }</pre>
 *
 * @see RpcAgent#rpcSync
 */
@FunctionalInterface
public interface RpcFunction0<R> extends Serializable, RemoteFunction {
    R call() throws Exception;
}
