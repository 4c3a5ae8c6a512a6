package dev.ferry.tensor.autograd;

/**
 * Whether operations record the backward graph, per thread. Change it only through a scope:
 *
 * <pre>
 * try (var scope = Autograd.noGrad()) {
 *     w.sub_(w.grad().mul(lr));   // not recorded
 * }
 * </pre>
 */
public final class GradMode {
    private static final ThreadLocal<boolean[]> ENABLED = ThreadLocal.withInitial(() -> new boolean[] {true});

    private GradMode() {
    }

    public static boolean isEnabled() {
        return ENABLED.get()[0];
    }

    /** Sets the mode for this thread until the returned scope is closed (restores the previous mode). */
    static Scope set(boolean enabled) {
        boolean[] cell = ENABLED.get();
        Scope scope = new Scope(cell, cell[0]);
        cell[0] = enabled;
        return scope;
    }

    /** Restores the previous grad mode when closed. Close it on the thread that opened it. */
    public static final class Scope implements AutoCloseable {
        private final boolean[] cell;
        private final boolean previous;
        private boolean closed;

        private Scope(boolean[] cell, boolean previous) {
            this.cell = cell;
            this.previous = previous;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                cell[0] = previous;
            }
        }
    }
}
