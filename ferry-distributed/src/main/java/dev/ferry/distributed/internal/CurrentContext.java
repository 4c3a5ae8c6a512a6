package dev.ferry.distributed.internal;

import dev.ferry.rpc.spi.CallInterceptor;

/**
 * The distributed autograd context of the current thread (one at most, as in PyTorch): set by
 * {@code DistAutograd.context()} on application threads, and around each handler of a call that
 * arrived in a context, so that the calls the handler makes carry it on.
 */
public final class CurrentContext {
    private static final ThreadLocal<ContextState> CURRENT = new ThreadLocal<>();

    private CurrentContext() {
    }

    /**
     * The context of this thread, or null: also null once the context left this worker, closed
     * from another thread (a callback, an executor) while bound here, or released while a handler
     * ran in it; this thread can then open a new one.
     */
    public static ContextState get() {
        ContextState state = CURRENT.get();
        if (state != null && state.left()) {
            CURRENT.remove();
            return null;
        }
        return state;
    }

    /**
     * Makes {@code state} this thread's context until the returned scope is closed. Closing the
     * scope on another thread does nothing there: that thread's own context is not this one's to end.
     */
    public static CallInterceptor.Scope bind(ContextState state) {
        ContextState previous = get();
        Thread bound = Thread.currentThread();
        CURRENT.set(state);
        return () -> {
            if (Thread.currentThread() != bound) {
                return;
            }
            if (previous == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(previous);
            }
        };
    }
}
