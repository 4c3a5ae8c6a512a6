package dev.ferry.rpc.internal.concurrent;

import java.util.ArrayDeque;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callbacks of one future: run once, in registration order, after the future completes.
 *
 * <p>{@link java.util.concurrent.CompletableFuture} runs its dependents in reverse order of
 * registration, while PyTorch's futures (and their tests) run callbacks in the order they were
 * added; this queue provides that order. A callback added after completion runs at once on the
 * adding thread (inline), unless the completing thread is still running earlier callbacks: then it
 * is appended and that thread runs it after them, so the order holds under races too.
 *
 * <pre>{@code
 * CallbackQueue callbacks = new CallbackQueue();
 * callbacks.add(() -> log.info("first"));
 * callbacks.add(() -> log.info("second"));
 * callbacks.fire();                          // logs "first", then "second", on this thread
 * callbacks.add(() -> log.info("third"));    // already fired: runs inline
 * }</pre>
 *
 * <p>A callback that throws is logged and skipped; it never stops the callbacks after it. Callbacks
 * run recursively on the completing thread when they complete other futures (as in PyTorch), so a
 * chain of many thousands of futures registered before the first completes can exhaust the stack.
 *
 * <p>This class is thread-safe. Callbacks never run while its lock is held.
 */
public final class CallbackQueue {
    private static final Logger log = LoggerFactory.getLogger(CallbackQueue.class);

    private enum State { OPEN, RUNNING, DRAINED }

    // Guarded by this. Allocated on first use: most RPC futures get zero or one callback.
    private ArrayDeque<Runnable> pending;
    private State state = State.OPEN;

    /** Adds a callback, or runs it now on this thread if the queue has fired and drained. */
    public void add(Runnable callback) {
        synchronized (this) {
            if (state != State.DRAINED) {
                if (pending == null) {
                    pending = new ArrayDeque<>(2);
                }
                pending.add(callback);
                return;
            }
        }
        runSafely(callback);
    }

    /**
     * Runs the callbacks added so far, and any added while they run, on this thread.
     *
     * @throws IllegalStateException if the queue has fired before
     */
    public void fire() {
        synchronized (this) {
            if (state != State.OPEN) {
                throw new IllegalStateException("callbacks already fired");
            }
            state = State.RUNNING;
        }
        for (;;) {
            Runnable next;
            synchronized (this) {
                next = pending == null ? null : pending.poll();
                if (next == null) {
                    state = State.DRAINED;
                    pending = null;
                    return;
                }
            }
            runSafely(next);
        }
    }

    /** Number of callbacks waiting to run; for diagnostics ({@code toString}) only. */
    public synchronized int pendingCount() {
        return pending == null ? 0 : pending.size();
    }

    private static void runSafely(Runnable callback) {
        try {
            callback.run();
        } catch (Throwable t) {
            // PyTorch's add_done_callback logs and swallows; one bad callback must not starve the rest.
            log.warn("Got the following error when running the callback: {}", t.toString(), t);
        }
    }
}
