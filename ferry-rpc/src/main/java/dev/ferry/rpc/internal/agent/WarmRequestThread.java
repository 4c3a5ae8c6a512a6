package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import dev.ferry.rpc.internal.concurrent.AgentThreads;
import dev.ferry.rpc.internal.concurrent.ManagedBlocking;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One platform thread that runs requests while it is free, and stays awake (spinning, yielding)
 * for a short adaptive window after each, so that the next request of a steady exchange starts at
 * once: a request handed to a new virtual thread waits for an idle carrier to wake (on a VM whose
 * idle vCPU halts, tens of µs).
 *
 * <h2>Backlog</h2>
 * A request arriving while this thread is busy may wait behind the running one in a short
 * backlog, as long as the requests ahead of it are expected to take less than
 * {@link #maxQueueWaitNanos} in all (from the running average of this thread's requests):
 * under a burst of small calls one warm thread runs them back to back, which on a few CPUs beats
 * starting a virtual thread for each (a carrier hand-off and wake-up per call, and the scheduler's
 * code to warm up). Anything else goes to a virtual thread as before ({@code offer} returns false).
 *
 * <h2>A handler that blocks</h2>
 * Nothing may wait for long behind a handler that blocks, or a nested call could deadlock on the
 * very request queued behind it. So the backlog moves to virtual threads ({@code spill}):
 * <ul>
 *   <li>when the running request blocks on a Ferry future (a nested call): at once, through
 *       {@link ManagedBlocking#onBlocking};</li>
 *   <li>when a request arrives and the running one has {@linkplain #stalled stalled}: taken more
 *       than {@link #STALL_NANOS} with this thread waiting (on a lock, a park, a sleep), or more
 *       than {@link #LONG_RUN_FACTOR} times that whatever its state;</li>
 *   <li>when the watchdog, armed through {@code schedule} while the backlog is not empty, finds the
 *       running request stalled (a handler blocked on anything else: a lock, a sleep, or I/O in
 *       native code, which shows as runnable; it waits at most the watchdog's period, 10 ms,
 *       beyond that).</li>
 * </ul>
 * A runnable thread past {@link #STALL_NANOS} has, on busy CPUs, usually just been preempted:
 * handing its backlog to virtual threads then costs a carrier wake-up each and starts nothing
 * sooner (on the 2-vCPU VM, W2's window of 64 spilled its backlog that way 100-250 times in 12,000
 * calls).
 *
 * <pre>
 *   offer(task) ── free? ──yes──▶ this thread runs it, then the backlog, then spins ≤ budget, then parks
 *                          └─no──▶ short wait expected? ──yes──▶ backlog
 *                                                      └─no──▶ false: the caller uses a virtual thread
 * </pre>
 *
 * <h2>Its permit</h2>
 * The thread holds one of the worker's request permits ({@link ManagedBlocking.Permit}) from the
 * moment it starts until it parks, and takes it again when it wakes, rather than per request:
 * taking and returning a permit around each request cost two atomic updates and two thread-local
 * writes per call, and the JIT had compiled the request path (decoding, the handler, encoding the
 * reply: ~5 KB of bytecode inlined) assuming permits never ran out, so the first time virtual
 * threads used them all, ~30,000 calls into W2, it threw that code away and took ~200 ms of a CPU
 * to compile it again. It gives the permit back while parked so that a worker of one permit never
 * waits for an idle thread, and, like every request, while a handler blocks on a Ferry future.
 *
 * <p>This class is thread-safe.
 */
final class WarmRequestThread {
    /** A request running longer than this may be blocked: what waits behind it moves on. */
    static final long STALL_NANOS = 250_000;
    /** A request running this many times {@link #STALL_NANOS} is stalled even while runnable. */
    static final long LONG_RUN_FACTOR = 8;
    /** The most requests in the backlog, however short they are. */
    static final int MAX_BACKLOG = 256;
    /**
     * A request counts in the running average as at most this many times the average (of at least
     * 1 µs): see {@link #nextAverage}.
     */
    static final long OUTLIER_FACTOR = 8;

    /**
     * The thread's clock and the two spans it judges requests by (tests give their own clock).
     *
     * @param clock             nanoseconds, as {@link System#nanoTime()}
     * @param stallNanos        a request running longer than this may be blocked
     * @param maxQueueWaitNanos the most a request is expected to wait in the backlog
     */
    record Timing(LongSupplier clock, long stallNanos, long maxQueueWaitNanos) {
        /**
         * The system clock, {@link WarmRequestThread#STALL_NANOS} and {@link
         * WarmRequestThread#maxQueueWaitNanos(int)} for this machine's processors.
         */
        static Timing ofThisMachine() {
            int processors = Runtime.getRuntime().availableProcessors();
            return new Timing(System::nanoTime, STALL_NANOS, WarmRequestThread.maxQueueWaitNanos(processors));
        }
    }

    /**
     * The most a request is expected to wait in the backlog for the ones ahead of it: 100 µs, or
     * 300 µs on at most 2 processors, where a virtual thread seldom finds a CPU that neither this
     * thread nor the event loop holds. (On the 2-vCPU VM a window of 64 small calls overflowed a
     * 100 µs backlog on ~5 % of its calls, each then waking a carrier, and running code the JIT
     * compiled only then.)
     */
    static long maxQueueWaitNanos(int processors) {
        return processors <= 2 ? 300_000 : 100_000;
    }

    private static final Object FREE = new Object();
    private static final Object RUNNING = new Object();

    /** FREE, RUNNING, or the task handed over and not started yet. */
    private final AtomicReference<Object> state = new AtomicReference<>(FREE);
    /** Requests waiting behind the running one; guarded by itself. */
    private final ArrayDeque<Runnable> backlog = new ArrayDeque<>();
    private final Executor spillTo;
    private final Consumer<Runnable> schedule;
    private final ManagedBlocking.Permit permit;
    private final Runnable onStart;
    private final AdaptiveSpin spin;
    private final LongSupplier clock;
    private final long stallNanos;
    private final long maxQueueWaitNanos;
    private final Thread thread;
    /** Size of the backlog, readable without its lock. */
    private volatile int waiting;
    /** When the running request started ({@link System#nanoTime()}). */
    private volatile long runningSince;
    /** Running average of how long a request takes here; written by this thread only. */
    private volatile long averageNanos;
    private boolean watchdogArmed; // guarded by backlog
    private volatile boolean parked;
    /** It holds its permit (awake), whether or not it runs a request. */
    private volatile boolean holdingPermit;
    private volatile boolean closed;

    /**
     * @param spillTo  runs requests that leave the backlog (on virtual threads); must accept them
     *                 until {@link #close} returns (it handles its own rejections)
     * @param schedule runs a task a little later on another thread (the watchdog)
     * @param permit   the request permit the thread holds while awake (see the class comment)
     * @param onStart  runs on the thread before anything else (binds what requests expect of their thread)
     * @param timing   its clock and spans, {@link Timing#ofThisMachine()} but in tests
     */
    WarmRequestThread(String name, long spinNanos, Executor spillTo, Consumer<Runnable> schedule,
                      ManagedBlocking.Permit permit, Runnable onStart, Timing timing) {
        this.spin = new AdaptiveSpin(spinNanos);
        this.spillTo = spillTo;
        this.schedule = schedule;
        this.permit = permit;
        this.onStart = onStart;
        this.clock = timing.clock();
        this.stallNanos = timing.stallNanos();
        this.maxQueueWaitNanos = timing.maxQueueWaitNanos();
        this.averageNanos = stallNanos; // nothing queues until requests here have proved short
        this.thread = AgentThreads.unstarted(name, this::run);
        thread.start();
    }

    /**
     * Hands {@code task} to this thread if it is free, or puts it in the backlog if it will wait
     * only briefly; false if it should run elsewhere.
     */
    boolean offer(Runnable task) {
        if (closed) {
            return false;
        }
        if (state.compareAndSet(FREE, task)) {
            runningSince = clock.getAsLong();
            if (parked) {
                LockSupport.unpark(thread);
            }
            return true;
        }
        if (stalled(clock.getAsLong() - runningSince)) {
            spill();
            return false;
        }
        boolean arm;
        synchronized (backlog) {
            int size = backlog.size();
            if (closed || size >= MAX_BACKLOG || (size + 1) * averageNanos > maxQueueWaitNanos) {
                return false;
            }
            backlog.addLast(task);
            waiting = size + 1;
            arm = !watchdogArmed;
            watchdogArmed = true;
        }
        if (parked) {
            LockSupport.unpark(thread); // it became free meanwhile
        }
        if (arm) {
            schedule.accept(this::watch);
        }
        return true;
    }

    /** Whether it holds its permit between requests (awake, running none). */
    boolean idleWithPermit() {
        return holdingPermit && state.get() == FREE;
    }

    /**
     * The running average after a request that took {@code tookNanos}: an eighth of the way towards
     * it, and towards at most {@link #OUTLIER_FACTOR} times the average. A request that lost its CPU
     * for a scheduler slice (milliseconds, where it needs microseconds) then no longer makes the
     * next few hundred requests look long: on the 2-vCPU VM, under W2's window of 64, that sent
     * 100-800 of 10,000 calls to virtual threads (each a carrier wake-up, and code the JIT compiled
     * only then) where the warm thread was about to run them. Requests that really take longer
     * still raise it by up to 1.9 times per request: from 3 µs past 300 µs within 8 requests.
     */
    static long nextAverage(long averageNanos, long tookNanos) {
        long counted = Math.min(tookNanos, OUTLIER_FACTOR * Math.max(averageNanos, 1_000));
        return averageNanos + ((counted - averageNanos) >> 3);
    }

    /** The running average of how long a request takes here (tests). */
    long averageNanos() {
        return averageNanos;
    }

    /** Requests waiting in the backlog now. */
    int waiting() {
        return waiting;
    }

    /**
     * Takes no more requests and moves the backlog to virtual threads; the running request, if
     * any, goes on. Call before the executor that {@code spillTo} uses shuts down.
     */
    void stopTaking() {
        synchronized (backlog) {
            closed = true;
        }
        spill();
    }

    /**
     * Stops the thread once the task it runs, if any, has finished; waits up to {@code waitMillis}.
     * With {@code interrupt}, a running task is interrupted (a non-graceful shutdown).
     */
    void close(boolean interrupt, long waitMillis) {
        stopTaking();
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

    private void watch() {
        boolean stalled = stalled(clock.getAsLong() - runningSince) && state.get() != FREE;
        if (stalled) {
            spill();
        }
        boolean again;
        synchronized (backlog) {
            again = !backlog.isEmpty();
            watchdogArmed = again;
        }
        if (again) {
            schedule.accept(this::watch);
        }
    }

    /** Whether the request running for {@code runningNanos} may be blocked (see the class comment). */
    private boolean stalled(long runningNanos) {
        return runningNanos > stallNanos
                && (runningNanos > LONG_RUN_FACTOR * stallNanos || thread.getState() != Thread.State.RUNNABLE);
    }

    /** This thread's state (tests wait for a request to block). */
    Thread.State threadState() {
        return thread.getState();
    }

    /** Moves every waiting request to a virtual thread. */
    private void spill() {
        if (waiting == 0) {
            return;
        }
        Runnable[] tasks;
        synchronized (backlog) {
            tasks = backlog.toArray(new Runnable[0]);
            backlog.clear();
            waiting = 0;
        }
        for (Runnable task : tasks) {
            spillTo.execute(task);
        }
    }

    private Runnable nextFromBacklog() {
        if (waiting == 0) {
            return null;
        }
        synchronized (backlog) {
            Runnable next = backlog.pollFirst();
            waiting = backlog.size();
            return next;
        }
    }

    private void run() {
        ManagedBlocking.onBlocking(this::spill);
        onStart.run();
        permit.reacquire();
        holdingPermit = true;
        ManagedBlocking.bind(permit);
        try {
            loop();
        } finally {
            ManagedBlocking.unbind();
            holdingPermit = false;
            permit.release();
        }
    }

    private void loop() {
        long idleSince = System.nanoTime();
        boolean spinning = false;
        while (true) {
            Object current = state.get();
            Runnable task = null;
            if (current instanceof Runnable handed) {
                state.set(RUNNING);
                task = handed;
            } else if (current == FREE && waiting > 0 && state.compareAndSet(FREE, RUNNING)) {
                task = nextFromBacklog();
                if (task == null) { // spilled meanwhile
                    state.set(FREE);
                    continue;
                }
            }
            if (task != null) {
                if (spinning) {
                    spin.hit();
                    spinning = false;
                }
                runWithBacklog(task);
                state.set(FREE);
                idleSince = System.nanoTime();
                continue; // an offer may have queued after the last look at the backlog
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
            if (state.get() == FREE && waiting == 0 && !closed) {
                holdingPermit = false;
                permit.release();
                LockSupport.park(this);
                permit.reacquire();
                holdingPermit = true;
            }
            parked = false;
            if (state.get() instanceof Runnable || waiting > 0) {
                spin.parkedWaitEnded(System.nanoTime() - idleSince);
            }
            // Woken without a task (spuriously, or for close): the idle time keeps counting.
        }
    }

    /** Runs {@code first}, then the backlog until it is empty; the state stays RUNNING. */
    private void runWithBacklog(Runnable first) {
        Runnable task = first;
        long start = clock.getAsLong();
        while (task != null) {
            runningSince = start;
            try {
                task.run();
            } catch (Throwable unexpected) {
                // The task reports its own failures; nothing may end this thread.
            } finally {
                Thread.interrupted(); // an interrupt meant for that task stays with it
            }
            long end = clock.getAsLong();
            averageNanos = nextAverage(averageNanos, end - start);
            start = end;
            task = nextFromBacklog();
        }
    }
}
