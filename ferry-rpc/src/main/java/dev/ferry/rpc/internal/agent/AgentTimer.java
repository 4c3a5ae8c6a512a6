package dev.ferry.rpc.internal.agent;

import java.util.PriorityQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongUnaryOperator;

/**
 * The agent's one timer thread: it fails calls whose deadline passed and runs the few delayed
 * tasks the agent has (flushing RRef deletes, the request thread's watchdog). It sleeps until the
 * next thing is due and not a moment more, so an idle agent's timer never wakes.
 *
 * <h2>Why not a wheel or a scheduled executor</h2>
 * Every call has a deadline and almost every call ends long before it. A ticking wheel
 * ({@code HashedWheelTimer}) arms and cancels in O(1) but wakes every tick even with nothing to do
 * (its 50 ms tick was ~0.2 % of a core on an idle worker of the 2-vCPU VM); a
 * {@code ScheduledThreadPoolExecutor} wakes its thread whenever a task becomes the earliest, i.e.
 * on every call of a one-at-a-time exchange. Here a call costs no timer object at all: its deadline
 * lives in its {@link PendingCall}, and arming only compares it with the earliest deadline known
 * ({@link #armed}); with one timeout for all calls, each new deadline is later than that, so
 * nothing else happens. When the thread wakes it sweeps the pending calls ({@code sweep}: fails
 * the expired ones, returns the earliest remaining deadline) and sleeps until the next one.
 *
 * <pre>
 *   armed(deadline) ── earlier than the earliest known? ──no──▶ nothing (the usual case)
 *                                                        └yes─▶ lower it; wake the thread if it sleeps past it
 *   thread: sweep(now) + due tasks ──▶ sleep until min(earliest call deadline, first task)
 * </pre>
 *
 * <p>This class is thread-safe.
 */
final class AgentTimer implements AutoCloseable {
    private static final long NEVER = Long.MAX_VALUE;

    private record Task(long deadline, long order, Runnable action) {
    }

    private final Thread thread;
    private final LongUnaryOperator sweep;
    /** Delayed tasks by deadline, then arrival; guarded by itself. */
    private final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) -> a.deadline != b.deadline
            ? Long.compare(a.deadline, b.deadline) : Long.compare(a.order, b.order));
    private long taskCount; // guarded by tasks
    /** The earliest deadline the thread must look at ({@link System#nanoTime()}); NEVER: none. */
    private final AtomicLong earliest = new AtomicLong(NEVER);
    /** When the sleeping thread will look next; NEVER: not before it is woken. */
    private volatile long wakeAt = NEVER;
    /** Whether the thread sleeps (or is about to): only then may an arm need to wake it. */
    private volatile boolean sleeping;
    private volatile boolean closed;

    /**
     * @param sweep given the time now, fails the calls whose deadline passed and returns the
     *              earliest deadline of those still pending ({@code Long.MAX_VALUE}: none)
     */
    AgentTimer(ThreadFactory threads, LongUnaryOperator sweep) {
        this.sweep = sweep;
        this.thread = threads.newThread(this::loop);
        thread.setDaemon(true);
        thread.start();
    }

    /** A call with {@code deadline} ({@link System#nanoTime()}) was registered for {@code sweep} to find. */
    void armed(long deadline) {
        long known = earliest.get();
        while (deadline < known) {
            if (earliest.compareAndSet(known, deadline)) {
                if (sleeping && deadline < wakeAt) {
                    LockSupport.unpark(thread);
                }
                return;
            }
            known = earliest.get();
        }
    }

    /** Runs {@code action} on the timer thread after {@code delayNanos}. */
    void schedule(Runnable action, long delayNanos) {
        long deadline = System.nanoTime() + Math.max(0, delayNanos);
        synchronized (tasks) {
            tasks.add(new Task(deadline, taskCount++, action));
        }
        armed(deadline);
    }

    /** Stops the thread (tasks not yet due never run) and waits for it. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void loop() {
        while (!closed) {
            // Arms from here on lower 'earliest' again; the ones before are in the sweep.
            earliest.set(NEVER);
            long now = System.nanoTime();
            long next = Math.min(sweep.applyAsLong(now), runDueTasks(now));
            wakeAt = next;
            sleeping = true;
            // An arm that lowered 'earliest' before this read is seen here; one after it sees
            // 'sleeping' and 'wakeAt' and wakes the thread if it must.
            long armed = earliest.get();
            if (armed < next) {
                next = armed;
                wakeAt = next;
            }
            // Leave the deadline for arms to compare with: later ones then need nothing.
            earliest.accumulateAndGet(next, Math::min);
            if (closed) {
                return;
            }
            if (next == NEVER) {
                LockSupport.park(this);
            } else {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(this, wait);
                }
            }
            sleeping = false;
            wakeAt = NEVER;
        }
    }

    /** Runs the tasks that are due; returns the deadline of the first one left, or NEVER. */
    private long runDueTasks(long now) {
        while (true) {
            Task due;
            synchronized (tasks) {
                Task first = tasks.peek();
                if (first == null) {
                    return NEVER;
                }
                if (first.deadline > now) {
                    return first.deadline;
                }
                due = tasks.poll();
            }
            try {
                due.action.run();
            } catch (RuntimeException | Error e) {
                // A task reports its own failures; the timer must go on.
            }
        }
    }
}
