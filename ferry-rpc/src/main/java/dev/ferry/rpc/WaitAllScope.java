package dev.ferry.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Waits, when closed, for every {@code rpcAsync} future started on this thread while it was open:
 * PyTorch's {@code rpc.api._wait_all()} context manager as a try-with-resources scope.
 *
 * <pre>{@code
 * try (WaitAllScope scope = WaitAllScope.open()) {
 *     for (String worker : workers) {
 *         agent.rpcAsync(worker, Ops::step, x);      // recorded in scope.futures()
 *     }
 * }                                                  // waits for all; throws the first failure
 * }</pre>
 *
 * <p>{@link #close()} waits like {@link RpcFuture#waitAll(List)}: it throws the first failure as
 * soon as any recorded future fails. It waits even when the body threw; then the body's exception
 * propagates and a failure of the wait is added to it as suppressed (the try-with-resources rule).
 * The scope is removed from the thread in every case.
 *
 * <p>Ferry's agent calls {@link #register(RpcFuture)} for each future returned by
 * {@code rpcAsync} (not for {@code rpcSync} calls, which have already waited); user code may
 * register its own futures the same way.
 *
 * <h2>Nesting</h2>
 * Scopes nest: a future is recorded only in the innermost open scope of the thread, and closing
 * the inner scope waits for its own futures and makes the outer scope current again. Scopes must
 * be closed in reverse order of opening, which try-with-resources guarantees; closing any other
 * way throws. (PyTorch's version does not support nesting.)
 *
 * <p>A scope belongs to the thread that opened it: open, register on and close it on that thread.
 * Futures started on other threads, for example inside callbacks, are not recorded.
 */
public final class WaitAllScope implements AutoCloseable {
    private static final ThreadLocal<WaitAllScope> CURRENT = new ThreadLocal<>();

    private final Thread owner;
    private final WaitAllScope outer;
    private final List<RpcFuture<?>> futures = new ArrayList<>();
    private boolean closed;

    private WaitAllScope(Thread owner, WaitAllScope outer) {
        this.owner = owner;
        this.outer = outer;
    }

    /** Opens a scope on the calling thread; it becomes the thread's innermost scope. */
    public static WaitAllScope open() {
        WaitAllScope scope = new WaitAllScope(Thread.currentThread(), CURRENT.get());
        CURRENT.set(scope);
        return scope;
    }

    /**
     * Records {@code future} in the calling thread's innermost open scope, if there is one.
     *
     * @return true if a scope recorded the future
     */
    public static boolean register(RpcFuture<?> future) {
        Objects.requireNonNull(future, "future");
        WaitAllScope scope = CURRENT.get();
        if (scope == null) {
            return false;
        }
        scope.futures.add(future);
        return true;
    }

    /** The calling thread's innermost open scope, or null. */
    public static WaitAllScope current() {
        return CURRENT.get();
    }

    /** The futures recorded so far, in order of registration (a snapshot). */
    public List<RpcFuture<?>> futures() {
        return List.copyOf(futures);
    }

    /**
     * Removes this scope from the thread, then waits for its futures. Calling it again does
     * nothing.
     *
     * @throws RpcException the first failure of a recorded future (see {@link RpcFuture#await()});
     *                      {@link RpcException.Code#ILLEGAL_STATE} if called on another thread
     *                      than the one that opened the scope, or while a scope opened inside
     *                      this one is still open (nothing is closed then)
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (Thread.currentThread() != owner) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, "WaitAllScope opened on thread '"
                    + owner.getName() + "' cannot be closed on thread '" + Thread.currentThread().getName() + "'");
        }
        if (CURRENT.get() != this) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE,
                    "WaitAllScope closed while a scope opened inside it is still open; close scopes in reverse order");
        }
        closed = true;
        // Leave the thread clean before waiting, so that a failed or interrupted wait cannot leak
        // this scope into later code on the thread.
        if (outer == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(outer);
        }
        RpcFuture.waitAll(futures);
    }

    @Override
    public String toString() {
        return "WaitAllScope[" + futures.size() + " futures" + (closed ? ", closed" : "") + "]";
    }
}
