package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One platform thread that runs requests while it is free, and stays awake (spinning, yielding)
 * for a short adaptive window after each, so that the next request of a steady exchange starts at
 * once: a request handed to a new virtual thread waits for an idle carrier to wake (on a VM whose
 * idle vCPU halts, tens of µs). A request arriving while this thread is busy goes to a virtual
 * thread as usual, so a handler that blocks here holds only this thread and nothing waits for it.
 *
 * <pre>
 *   offer(task) ── free? ──yes──▶ this thread runs it, then spins ≤ budget, then parks
 *                          └─no──▶ false: the caller uses a virtual thread
 * </pre>
 *
 * <p>This class is thread-safe.
 */
final class WarmRequestThread {
    private static final Object FREE = new Object();
    private static final Object RUNNING = new Object();

    /** FREE, RUNNING, or the task handed over and not started yet. */
    private final AtomicReference<Object> state = new AtomicReference<>(FREE);
    private final AdaptiveSpin spin;
    private final Thread thread;
    private volatile boolean parked;
    private volatile boolean closed;

    WarmRequestThread(String name, long spinNanos) {
        this.spin = new AdaptiveSpin(spinNanos);
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this::loop);
        thread.start();
    }

    /** Hands {@code task} to this thread if it is free; false if it is busy or closed. */
    boolean offer(Runnable task) {
        if (closed || !state.compareAndSet(FREE, task)) {
            return false;
        }
        if (parked) {
            LockSupport.unpark(thread);
        }
        return true;
    }

    /**
     * Stops the thread once the task it runs, if any, has finished; waits up to {@code waitMillis}.
     * With {@code interrupt}, a running task is interrupted (a non-graceful shutdown).
     */
    void close(boolean interrupt, long waitMillis) {
        closed = true;
        if (interrupt && state.get() != FREE) {
            thread.interrupt();
        }
        LockSupport.unpark(thread);
        try {
            thread.join(waitMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        long idleSince = System.nanoTime();
        boolean spinning = false;
        while (true) {
            Object current = state.get();
            if (current instanceof Runnable task) {
                if (spinning) {
                    spin.hit();
                    spinning = false;
                }
                state.set(RUNNING);
                try {
                    task.run();
                } catch (Throwable unexpected) {
                    // The task reports its own failures; nothing may end this thread.
                } finally {
                    Thread.interrupted(); // an interrupt meant for that task stays with it
                    state.set(FREE);
                }
                idleSince = System.nanoTime();
                continue;
            }
            if (closed) {
                // A task handed over just before close still runs (above); a later offer fails.
                if (state.get() == FREE && state.compareAndSet(FREE, RUNNING)) {
                    return;
                }
                continue;
            }
            long idle = System.nanoTime() - idleSince;
            if (idle < spin.budgetNanos()) {
                spinning = true;
                if (spin.yieldUncontended()) {
                    continue;
                }
                spinning = false; // busy CPUs: park (the miss is counted)
            }
            if (spinning) {
                spin.miss();
                spinning = false;
            }
            parked = true;
            if (state.get() == FREE && !closed) {
                LockSupport.park(this);
            }
            parked = false;
            if (state.get() instanceof Runnable) {
                spin.parkedWaitEnded(System.nanoTime() - idleSince);
            }
            // Woken without a task (spuriously, or for close): the idle time keeps counting.
        }
    }
}
