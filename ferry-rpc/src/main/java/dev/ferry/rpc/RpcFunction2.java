package dev.ferry.rpc;

import java.io.Serializable;

/**
 * A function of 2 arguments that can be called on another worker: pass a method reference or
 * a lambda. It travels as a reference to the implementing method (its class, name and
 * signature), never as code, and is resolved on the callee, which must have the same class.
 * Values a lambda captures travel with it and must be serializable by Ferry. The callee runs only
 * the application's code ({@link RpcBackendOptions.Builder#applicationPackage}, {@link RpcCallable}):
 * a lambda of the application may call the JDK, {@code Math::addExact} itself is refused.
 * <pre>{@code agent.rpcSync("worker1", (Integer a, Integer b) -> Math.addExact(a, b), 3, 4); // 7 }</pre>
 *
 * @see RpcAgent#rpcSync
 */
@FunctionalInterface
public interface RpcFunction2<A, B, R> extends Serializable, RemoteFunction {
    R call(A a, B b) throws Exception;
}
