package dev.ferry.rpc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a function whose result is a future ({@link RpcFuture} or
 * {@link java.util.concurrent.CompletionStage}): the callee replies when that future completes,
 * and does not hold a thread while it is pending (PyTorch's {@code @rpc.functions.async_execution}).
 *
 * <pre>{@code
 * @AsyncExecution
 * static RpcFuture<Integer> addThenDouble(String to, int x) {
 *     return Rpc.rpcAsync(to, Ops::add, x, 1).thenApply(v -> v * 2);
 * }
 *
 * int twelve = Rpc.rpcSync("worker1", Async.value(Ops::addThenDouble), "worker2", 5);
 * }</pre>
 *
 * <p>Callers get the future's value through {@link Async#value}, on every call kind; called
 * without it, the function's static type is its future, and the caller gets a completed one (see
 * {@link Async}). A function so marked that returns anything else fails the call with a clear error.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface AsyncExecution {
}
