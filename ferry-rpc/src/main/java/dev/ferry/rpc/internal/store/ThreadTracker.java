package dev.ferry.rpc.internal.store;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starts virtual threads and remembers them until they end, so an owner can join them on close
 * and tests can assert that nothing outlived it. This class is thread-safe.
 */
public final class ThreadTracker {
    private final Set<Thread> live = ConcurrentHashMap.newKeySet();

    /** Starts {@code task} on a new virtual thread named {@code name}. */
    public Thread start(String name, Runnable task) {
        return start(name, task, () -> { });
    }

    /**
     * Starts {@code task} on a new virtual thread named {@code name}; {@code afterEnd} runs on it once
     * the thread no longer counts as live, so whatever it frees never coexists with the thread.
     */
    public Thread start(String name, Runnable task, Runnable afterEnd) {
        Thread thread = Thread.ofVirtual().name(name).unstarted(() -> {
            try {
                task.run();
            } finally {
                live.remove(Thread.currentThread());
                afterEnd.run();
            }
        });
        // Registered before start() so that a join racing with a fresh thread still sees it.
        live.add(thread);
        thread.start();
        return thread;
    }

    /** Threads started here that have not ended yet. */
    public int liveCount() {
        return live.size();
    }

    /**
     * Waits up to {@code timeout} for every tracked thread to end; returns whether they all did.
     * Must not be called from a tracked thread.
     */
    public boolean joinAll(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        // Loop rather than iterate once: a thread may start another (a waiter for a late request).
        while (!live.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            Thread any = live.stream().findAny().orElse(null);
            if (any != null) {
                any.join(Duration.ofNanos(left));
            }
        }
        return true;
    }
}
