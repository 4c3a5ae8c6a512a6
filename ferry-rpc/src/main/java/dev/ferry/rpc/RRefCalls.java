package dev.ferry.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * Calls on the value an {@link RRef} refers to, run where the value lives (its owner), with the
 * options of this view. The value is the receiver of the method: {@code Counter::add} runs
 * {@code value.add(...)} on the owner. Obtained from {@link RRef#withTimeout}; immutable.
 *
 * <pre>{@code
 * RRef<Counter> counter = agent.to("worker1").remote(Counter::new, 0);
 * int now = counter.withTimeout(Duration.ofSeconds(1)).rpcSync(Counter::add, 5);
 * }</pre>
 *
 * @param <T> the type of the referenced value
 */
public final class RRefCalls<T> {
    private final RRef<T> rref;
    private final Duration timeout;

    RRefCalls(RRef<T> rref, Duration timeout) {
        this.rref = Objects.requireNonNull(rref, "rref");
        this.timeout = timeout;
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <R> R rpcSync(RpcFunction1<? super T, R> method) {
        return rref.context().host().callOnValueAndWait(rref, method, new Object[] {rref}, timeout);
    }

    /** Runs {@code method} on the value where it lives. */
    public <R> RpcFuture<R> rpcAsync(RpcFunction1<? super T, R> method) {
        return rref.context().host().callOnValue(rref, method, new Object[] {rref}, timeout);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <R> RRef<R> remote(RpcFunction1<? super T, R> method) {
        return rref.context().host().remoteOnValue(rref, method, new Object[] {rref}, timeout);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, R> R rpcSync(RpcFunction2<? super T, A, R> method, A a) {
        return rref.context().host().callOnValueAndWait(rref, method, new Object[] {rref, a}, timeout);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, R> RpcFuture<R> rpcAsync(RpcFunction2<? super T, A, R> method, A a) {
        return rref.context().host().callOnValue(rref, method, new Object[] {rref, a}, timeout);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, R> RRef<R> remote(RpcFunction2<? super T, A, R> method, A a) {
        return rref.context().host().remoteOnValue(rref, method, new Object[] {rref, a}, timeout);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, R> R rpcSync(RpcFunction3<? super T, A, B, R> method, A a, B b) {
        return rref.context().host().callOnValueAndWait(rref, method, new Object[] {rref, a, b}, timeout);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, R> RpcFuture<R> rpcAsync(RpcFunction3<? super T, A, B, R> method, A a, B b) {
        return rref.context().host().callOnValue(rref, method, new Object[] {rref, a, b}, timeout);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, R> RRef<R> remote(RpcFunction3<? super T, A, B, R> method, A a, B b) {
        return rref.context().host().remoteOnValue(rref, method, new Object[] {rref, a, b}, timeout);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, C, R> R rpcSync(RpcFunction4<? super T, A, B, C, R> method, A a, B b, C c) {
        return rref.context().host().callOnValueAndWait(rref, method, new Object[] {rref, a, b, c}, timeout);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, C, R> RpcFuture<R> rpcAsync(RpcFunction4<? super T, A, B, C, R> method, A a, B b, C c) {
        return rref.context().host().callOnValue(rref, method, new Object[] {rref, a, b, c}, timeout);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, C, R> RRef<R> remote(RpcFunction4<? super T, A, B, C, R> method, A a, B b, C c) {
        return rref.context().host().remoteOnValue(rref, method, new Object[] {rref, a, b, c}, timeout);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, C, D, R> R rpcSync(RpcFunction5<? super T, A, B, C, D, R> method, A a, B b, C c, D d) {
        return rref.context().host().callOnValueAndWait(rref, method, new Object[] {rref, a, b, c, d}, timeout);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, C, D, R> RpcFuture<R> rpcAsync(RpcFunction5<? super T, A, B, C, D, R> method, A a, B b, C c, D d) {
        return rref.context().host().callOnValue(rref, method, new Object[] {rref, a, b, c, d}, timeout);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, C, D, R> RRef<R> remote(RpcFunction5<? super T, A, B, C, D, R> method, A a, B b, C c, D d) {
        return rref.context().host().remoteOnValue(rref, method, new Object[] {rref, a, b, c, d}, timeout);
    }

    /** Runs {@code method} on the value where it lives and waits for the result. */
    public <A, B, C, D, E, R> R rpcSync(RpcFunction6<? super T, A, B, C, D, E, R> method, A a, B b, C c, D d, E e) {
        return rref.context().host().callOnValueAndWait(rref, method, new Object[] {rref, a, b, c, d, e}, timeout);
    }

    /** Runs {@code method} on the value where it lives. */
    public <A, B, C, D, E, R> RpcFuture<R> rpcAsync(RpcFunction6<? super T, A, B, C, D, E, R> method,
                                                    A a, B b, C c, D d, E e) {
        return rref.context().host().callOnValue(rref, method, new Object[] {rref, a, b, c, d, e}, timeout);
    }

    /** Runs {@code method} on the value where it lives; the result stays there too. */
    public <A, B, C, D, E, R> RRef<R> remote(RpcFunction6<? super T, A, B, C, D, E, R> method, A a, B b, C c, D d, E e) {
        return rref.context().host().remoteOnValue(rref, method, new Object[] {rref, a, b, c, d, e}, timeout);
    }

    /**
     * Binds {@code method} to the value, to be called many times, {@code obj.method(x)} style
     * (tensorplay's {@code method_factory} / {@code new_method}): the owner resolves and checks it
     * once, now, and each call through the result carries a short handle in place of the method's
     * reference. Waits for the owner's answer, with this view's timeout, which the calls keep.
     *
     * <pre>{@code
     * RemoteMethod1<Integer, Integer> add = counter.withTimeout(Duration.ofSeconds(5)).method(Counter::add);
     * add.rpcSync(1);
     * }</pre>
     *
     * @throws RpcException {@link RpcException.Code#UNKNOWN_FUNCTION} if the owner cannot or may
     *                      not run the method
     */
    public <R> RemoteMethod0<R> method(RpcFunction1<? super T, R> method) {
        return new RemoteMethod0<>(rref.context().host().bindOnValue(rref, method, timeout), timeout);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, R> RemoteMethod1<A, R> method(RpcFunction2<? super T, A, R> method) {
        return new RemoteMethod1<>(rref.context().host().bindOnValue(rref, method, timeout), timeout);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, R> RemoteMethod2<A, B, R> method(RpcFunction3<? super T, A, B, R> method) {
        return new RemoteMethod2<>(rref.context().host().bindOnValue(rref, method, timeout), timeout);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, C, R> RemoteMethod3<A, B, C, R> method(RpcFunction4<? super T, A, B, C, R> method) {
        return new RemoteMethod3<>(rref.context().host().bindOnValue(rref, method, timeout), timeout);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, C, D, R> RemoteMethod4<A, B, C, D, R> method(RpcFunction5<? super T, A, B, C, D, R> method) {
        return new RemoteMethod4<>(rref.context().host().bindOnValue(rref, method, timeout), timeout);
    }

    /** Binds {@code method} to the value, to be called many times: see {@link #method(RpcFunction1)}. */
    public <A, B, C, D, E, R> RemoteMethod5<A, B, C, D, E, R> method(RpcFunction6<? super T, A, B, C, D, E, R> method) {
        return new RemoteMethod5<>(rref.context().host().bindOnValue(rref, method, timeout), timeout);
    }
}
