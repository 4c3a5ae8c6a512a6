package dev.ferry.rpc.internal.concurrent;

/**
 * Lets a thread give up a limited resource while it blocks on a Ferry future. A request handler
 * holds one of the agent's {@code numWorkerThreads} permits while it runs; when it blocks on a
 * nested call the permit goes back, so blocked handlers can never starve the worker of permits
 * (the deadlock PyTorch has when nested calls fill its thread pool), and it is taken again before
 * the handler continues.
 */
public final class ManagedBlocking {
    private static final ThreadLocal<Permit> CURRENT = new ThreadLocal<>();
    private static final ThreadLocal<Runnable> ON_BLOCKING = new ThreadLocal<>();

    private ManagedBlocking() {
    }

    /** A resource held by the current thread that it may give up while blocked. */
    public interface Permit {
        void release();

        void reacquire();
    }

    /** Binds {@code permit} to the current thread until {@link #unbind()}. */
    public static void bind(Permit permit) {
        CURRENT.set(permit);
    }

    public static void unbind() {
        CURRENT.remove();
    }

    /**
     * Runs {@code hook} on the current thread each time it is about to block on a Ferry future,
     * for as long as the thread lives (a thread that other work waits behind hands that work on).
     */
    public static void onBlocking(Runnable hook) {
        ON_BLOCKING.set(hook);
    }

    /** Called right before the current thread blocks; returns what {@link #afterBlocking} needs. */
    public static Permit beforeBlocking() {
        Runnable hook = ON_BLOCKING.get();
        if (hook != null) {
            hook.run();
        }
        Permit permit = CURRENT.get();
        if (permit != null) {
            permit.release();
        }
        return permit;
    }

    /** Called when the thread stops blocking, with what {@link #beforeBlocking} returned. */
    public static void afterBlocking(Permit permit) {
        if (permit != null) {
            permit.reacquire();
        }
    }
}
