package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.AsyncRemoteFunction;
import dev.ferry.rpc.AsyncRpcFunction0;
import dev.ferry.rpc.AsyncRpcFunction1;
import dev.ferry.rpc.AsyncRpcFunction2;
import dev.ferry.rpc.AsyncRpcFunction3;
import dev.ferry.rpc.AsyncRpcFunction4;
import dev.ferry.rpc.AsyncRpcFunction5;
import dev.ferry.rpc.AsyncRpcFunction6;
import dev.ferry.rpc.RpcFunction0;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.RpcFunction2;
import dev.ferry.rpc.RpcFunction3;
import dev.ferry.rpc.RpcFunction4;
import dev.ferry.rpc.RpcFunction5;
import dev.ferry.rpc.RpcFunction6;

/**
 * What {@link dev.ferry.rpc.Async#value} returns: an {@link AsyncRemoteFunction} seen as the
 * {@code RpcFunctionN} of its arity, so that every call kind takes it. It travels as the function
 * it wraps ({@link FunctionRefs} unwraps it) and tells the caller to hand out the future's value.
 * Called here, it runs the function and waits for its future.
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public final class AsyncValue implements RpcFunction0, RpcFunction1, RpcFunction2, RpcFunction3, RpcFunction4,
        RpcFunction5, RpcFunction6 {
    private static final long serialVersionUID = 1L;

    private final AsyncRemoteFunction function;

    private AsyncValue(AsyncRemoteFunction function) {
        this.function = function;
    }

    public static AsyncValue of(AsyncRemoteFunction function) {
        if (function == null) {
            throw new NullPointerException("function");
        }
        return new AsyncValue(function);
    }

    /** The function this wraps: what travels. */
    public AsyncRemoteFunction function() {
        return function;
    }

    @Override
    public Object call() throws Exception {
        return ((AsyncRpcFunction0) function).call().await();
    }

    @Override
    public Object call(Object a) throws Exception {
        return ((AsyncRpcFunction1) function).call(a).await();
    }

    @Override
    public Object call(Object a, Object b) throws Exception {
        return ((AsyncRpcFunction2) function).call(a, b).await();
    }

    @Override
    public Object call(Object a, Object b, Object c) throws Exception {
        return ((AsyncRpcFunction3) function).call(a, b, c).await();
    }

    @Override
    public Object call(Object a, Object b, Object c, Object d) throws Exception {
        return ((AsyncRpcFunction4) function).call(a, b, c, d).await();
    }

    @Override
    public Object call(Object a, Object b, Object c, Object d, Object e) throws Exception {
        return ((AsyncRpcFunction5) function).call(a, b, c, d, e).await();
    }

    @Override
    public Object call(Object a, Object b, Object c, Object d, Object e, Object f) throws Exception {
        return ((AsyncRpcFunction6) function).call(a, b, c, d, e, f).await();
    }
}
