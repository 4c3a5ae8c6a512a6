package dev.ferry.rpc;

import dev.ferry.rpc.internal.serial.AsyncValue;

/**
 * Calls of {@link AsyncExecution} functions that give the caller the value of the future the
 * function returns, as PyTorch's {@code rpc_sync}, {@code rpc_async} and {@code remote} do for an
 * {@code async_execution} function: wrap the function in {@link #value} and call it as any other.
 *
 * <pre>{@code
 * @AsyncExecution
 * static RpcFuture<Integer> doubleRemotely(String on, int x) {
 *     return Rpc.rpcAsync(on, Math::addExact, x, x);
 * }
 *
 * int doubled = Rpc.rpcSync("worker1", Async.value(Ops::doubleRemotely), "worker2", 21);   // 42
 * RpcFuture<Integer> later = Rpc.rpcAsync("worker1", Async.value(Ops::doubleRemotely), "worker2", 21);
 * RRef<Integer> kept = Rpc.remote("worker1", Async.value(Ops::doubleRemotely), "worker2", 21);
 * int viaValue = counter.rpcSync(Async.value(Counter::addLater), 5);                        // on an RRef's value
 * }</pre>
 *
 * <p>Called without {@code value}, through an {@code RpcFunctionN}, the function's static type is
 * its future, and the caller gets the value as a completed future of that type: {@code rpcSync}
 * returns a completed {@code RpcFuture<T>} (or {@code CompletionStage<T>}), {@code rpcAsync} a
 * future of one. {@code remote} of such a function fails with
 * {@link RpcException.Code#INVALID_ARGUMENT}: the owner keeps the value, so an RRef typed by the
 * future could only fail where it is used.
 */
public final class Async {
    private Async() {
    }

    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <R> RpcFunction0<R> value(AsyncRpcFunction0<R> function) {
        return (RpcFunction0<R>) (RpcFunction0<?>) AsyncValue.of(function);
    }
    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <A, R> RpcFunction1<A, R> value(AsyncRpcFunction1<A, R> function) {
        return (RpcFunction1<A, R>) (RpcFunction1<?, ?>) AsyncValue.of(function);
    }
    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <A, B, R> RpcFunction2<A, B, R> value(AsyncRpcFunction2<A, B, R> function) {
        return (RpcFunction2<A, B, R>) (RpcFunction2<?, ?, ?>) AsyncValue.of(function);
    }
    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <A, B, C, R> RpcFunction3<A, B, C, R> value(AsyncRpcFunction3<A, B, C, R> function) {
        return (RpcFunction3<A, B, C, R>) (RpcFunction3<?, ?, ?, ?>) AsyncValue.of(function);
    }
    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <A, B, C, D, R> RpcFunction4<A, B, C, D, R> value(AsyncRpcFunction4<A, B, C, D, R> function) {
        return (RpcFunction4<A, B, C, D, R>) (RpcFunction4<?, ?, ?, ?, ?>) AsyncValue.of(function);
    }
    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <A, B, C, D, E, R> RpcFunction5<A, B, C, D, E, R> value(AsyncRpcFunction5<A, B, C, D, E, R> function) {
        return (RpcFunction5<A, B, C, D, E, R>) (RpcFunction5<?, ?, ?, ?, ?, ?>) AsyncValue.of(function);
    }
    /** {@code function}, called so that the caller gets its future's value (see the class description). */
    @SuppressWarnings("unchecked")
    public static <A, B, C, D, E, F, R> RpcFunction6<A, B, C, D, E, F, R> value(AsyncRpcFunction6<A, B, C, D, E, F, R> function) {
        return (RpcFunction6<A, B, C, D, E, F, R>) (RpcFunction6<?, ?, ?, ?, ?, ?, ?>) AsyncValue.of(function);
    }
}
