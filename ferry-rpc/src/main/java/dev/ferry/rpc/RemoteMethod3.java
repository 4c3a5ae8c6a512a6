package dev.ferry.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * A function of 3 arguments bound to the worker it runs on, resolved there once and then called as
 * often as needed (tensorplay's {@code method_factory} / {@code new_method}): the worker looked
 * the function up and checked it when it was bound, and each call carries a short handle in place of
 * the function's reference. Made by {@link RpcTarget#method} (a function run on a worker) or
 * {@link RRef#method} (a method run on an RRef's value, where it lives).
 *
 * <pre>{@code
 * var f = agent.to("worker1").method(Ops::f3);                         // resolved on worker1 now
 * f.rpcSync(a, b, c);
 * }</pre>
 *
 * <p>Calls behave as the same calls made without binding: the same results, errors and timeouts.
 * Immutable and thread-safe.
 *
 * @see RemoteMethod0
 */
public final class RemoteMethod3<A, B, C, R> {
    private final BoundFunction bound;
    private final Duration timeout;

    RemoteMethod3(BoundFunction bound, Duration timeout) {
        this.bound = Objects.requireNonNull(bound, "bound");
        this.timeout = timeout;
    }

    /** The worker the function runs on. */
    public WorkerInfo worker() {
        return bound.worker();
    }

    /** This method with a per-call timeout instead of the one it was made with; {@link Duration#ZERO} means none. */
    public RemoteMethod3<A, B, C, R> withTimeout(Duration timeout) {
        return new RemoteMethod3<>(bound, Objects.requireNonNull(timeout, "timeout"));
    }

    /** Calls the function and waits for its result. */
    public R rpcSync(A a, B b, C c) {
        return bound.invokeAndWait(new Object[] {a, b, c}, timeout);
    }

    /** Calls the function; the future completes with its result. */
    public RpcFuture<R> rpcAsync(A a, B b, C c) {
        return bound.invoke(new Object[] {a, b, c}, timeout);
    }

    /** Runs the function and keeps the result on its worker: returns a reference to it at once. */
    public RRef<R> remote(A a, B b, C c) {
        return bound.invokeRemote(new Object[] {a, b, c}, timeout);
    }

    @Override
    public String toString() {
        return "RemoteMethod3(" + bound + ")";
    }
}
