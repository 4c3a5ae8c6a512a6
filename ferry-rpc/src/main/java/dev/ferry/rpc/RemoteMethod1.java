package dev.ferry.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * A function of 1 argument bound to the worker it runs on, resolved there once and then called as
 * often as needed (tensorplay's {@code method_factory} / {@code new_method}): the worker looked
 * the function up and checked it when it was bound, and each call carries a short handle in place of
 * the function's reference. Made by {@link RpcTarget#method} (a function run on a worker) or
 * {@link RRef#method} (a method run on an RRef's value, where it lives).
 *
 * <pre>{@code
 * RemoteMethod1<Integer, Integer> add = counter.method(Counter::add);      // on an RRef's value, where it lives
 * for (int i = 0; i < 1000; i++) {
 *     add.rpcSync(1);                                                       // counter.add(1) on its owner
 * }
 * }</pre>
 *
 * <p>Calls behave as the same calls made without binding: the same results, errors and timeouts.
 * Immutable and thread-safe.
 *
 * @see RemoteMethod0
 */
public final class RemoteMethod1<A, R> {
    private final BoundFunction bound;
    private final Duration timeout;

    RemoteMethod1(BoundFunction bound, Duration timeout) {
        this.bound = Objects.requireNonNull(bound, "bound");
        this.timeout = timeout;
    }

    /** The worker the function runs on. */
    public WorkerInfo worker() {
        return bound.worker();
    }

    /** This method with a per-call timeout instead of the one it was made with; {@link Duration#ZERO} means none. */
    public RemoteMethod1<A, R> withTimeout(Duration timeout) {
        return new RemoteMethod1<>(bound, Objects.requireNonNull(timeout, "timeout"));
    }

    /** Calls the function and waits for its result. */
    public R rpcSync(A a) {
        return bound.invokeAndWait(new Object[] {a}, timeout);
    }

    /** Calls the function; the future completes with its result. */
    public RpcFuture<R> rpcAsync(A a) {
        return bound.invoke(new Object[] {a}, timeout);
    }

    /** Runs the function and keeps the result on its worker: returns a reference to it at once. */
    public RRef<R> remote(A a) {
        return bound.invokeRemote(new Object[] {a}, timeout);
    }

    @Override
    public String toString() {
        return "RemoteMethod1(" + bound + ")";
    }
}
