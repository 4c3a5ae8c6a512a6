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

    /** The context of this thread, or null. */
    public static ContextState get() {
        return CURRENT.get();
    }

    /** Makes {@code state} this thread's context until the returned scope is closed. */
    public static CallInterceptor.Scope bind(ContextState state) {
        ContextState previous = CURRENT.get();
        CURRENT.set(state);
        return () -> {
            if (previous == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(previous);
            }
        };
    }
}
