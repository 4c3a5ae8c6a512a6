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
 * <p>A callback that throws is logged and skipped; it never stops the callbacks after it.
 *
 * <h2>Nested completion</h2>
 * A callback that completes another future (as every {@code then} callback does) fires that
 * future's queue right away, on the same thread, as PyTorch does. To keep a long chain of futures
 * from overflowing the stack, once {@value #MAX_NESTED_FIRES} queues are firing inside each other
 * on one thread, a further queue is deferred: the outermost queue on the thread drains it as soon
 * as its current callback returns (CompletableFuture and Netty's promises bound the stack the same
 * way). Its future is already complete meanwhile; only its callbacks wait. A callback that blocks
 * until such a deferred callback has run would wait forever: one more reason callbacks must not
 * block.
 *
 * <p>This class is thread-safe. Callbacks never run while its lock is held.
 */
public final class CallbackQueue {
    private static final Logger log = LoggerFactory.getLogger(CallbackQueue.class);

    /** How many queues may fire inside each other on one thread before further ones are deferred. */
    public static final int MAX_NESTED_FIRES = 32;

    private static final ThreadLocal<Nesting> NESTING = ThreadLocal.withInitial(Nesting::new);

    // RUNNING: fired, and its callbacks are being run now or it waits in a thread's deferred queue.
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
     * Runs the callbacks added so far, and any added while they run, on this thread (deferred
     * within this thread when nested too deeply; see the class comment).
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
        Nesting nesting = NESTING.get();
        if (nesting.depth >= MAX_NESTED_FIRES) {
            nesting.deferred.add(this);
            return;
        }
        nesting.depth++;
        try {
            drain(nesting);
        } finally {
            nesting.depth--;
        }
    }

    private void drain(Nesting nesting) {
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
            if (nesting.depth == 1) {
                // The outermost queue on this thread: finish what deeper nesting deferred before
                // starting this queue's next callback, so a chain completes before its siblings run.
                nesting.drainDeferred();
            }
        }
    }

    /** Number of callbacks waiting to run; for diagnostics ({@code toString}) only. */
    public synchronized int pendingCount() {
        return pending == null ? 0 : pending.size();
    }

    /** Per-thread nesting of {@link #fire()} calls and the queues deferred because of it. */
    private static final class Nesting {
        int depth;
        final ArrayDeque<CallbackQueue> deferred = new ArrayDeque<>();

        void drainDeferred() {
            CallbackQueue queue;
            while ((queue = deferred.poll()) != null) {
                depth++;
                try {
                    queue.drain(this);
                } finally {
                    depth--;
                }
            }
        }
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
