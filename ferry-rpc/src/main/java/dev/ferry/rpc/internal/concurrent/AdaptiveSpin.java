package dev.ferry.rpc.internal.concurrent;

/**
 * How long a thread that waits for something polls before it parks, learnt from what the waits
 * turned out to be. Spinning pays only when the awaited event comes within the spin: then it saves
 * a wake-up, which on a VM whose idle vCPUs halt costs ~50–100 µs. So the budget halves each time
 * a spin ends with nothing (a miss) and doubles, up to {@code maxNanos}, when a spin catches the
 * event; after a parked wait it returns to the maximum when the event came within twice
 * {@code maxNanos} of the start of the wait: a full spin would probably have caught it, since a
 * parked wait also pays the wake-up that spinning saves (without that margin, waits just over the
 * maximum because of the wake-up would keep the spin off for good). A thread whose
 * waits are all long soon stops spinning; one in a fast exchange spins the maximum.
 *
 * <pre>
 *   wait ──▶ spin ≤ budget ──event──▶ hit: budget × 2 (≤ max)
 *                 └─expired─▶ miss: budget ÷ 2 ──▶ park ──event within 2 × max of the start──▶ budget = max
 * </pre>
 *
 * <p>Spinning threads {@link Thread#yield()} between polls rather than {@link Thread#onSpinWait()}:
 * a thread woken onto the spinning CPU (the one the spinner waits for, often) then runs at once
 * instead of waiting for the scheduler to preempt the spinner. Nothing spins on a single CPU.
 *
 * <p>Not thread-safe by design: the budget is a heuristic, so racy updates from several threads
 * only blur it. Give each event loop its own instance.
 */
public final class AdaptiveSpin {
    /** Whether spinning can help at all: with one CPU the spinner holds the CPU the event needs. */
    public static final boolean MULTI_CPU = Runtime.getRuntime().availableProcessors() > 1;

    /** A yield that took this long means other threads had work for this CPU. */
    static final long CONTENDED_NANOS = 100_000;

    private final long maxNanos;
    private final long contendedNanos;
    private final long stepNanos;
    private volatile long budgetNanos;

    /** A spin of at most {@code maxNanos} (0: never spin), starting at the maximum. */
    public AdaptiveSpin(long maxNanos) {
        this(maxNanos, CONTENDED_NANOS);
    }

    /** With a yield over {@code contendedNanos} taken as a busy CPU (tests pass a huge value). */
    public AdaptiveSpin(long maxNanos, long contendedNanos) {
        this.contendedNanos = contendedNanos;
        this.maxNanos = MULTI_CPU ? Math.max(0, maxNanos) : 0;
        this.stepNanos = Math.max(1, this.maxNanos / 16);
        this.budgetNanos = this.maxNanos;
    }

    /** How long the next wait may spin, in nanoseconds. */
    public long budgetNanos() {
        return budgetNanos;
    }

    /** The longest spin; 0 when spinning is off. */
    public long maxNanos() {
        return maxNanos;
    }

    /**
     * Yields once, as a spinning thread does between polls. Returns false, and counts a miss, when
     * the yield took over the contention limit ({@value #CONTENDED_NANOS} ns by default): other
     * threads needed the CPU for that long,
     * so spinning competes with real work (the CPUs are busy anyway, no halted one to avoid) and
     * the caller should park instead.
     */
    public boolean yieldUncontended() {
        long start = System.nanoTime();
        Thread.yield();
        if (System.nanoTime() - start > contendedNanos) {
            miss();
            return false;
        }
        return true;
    }

    /** A spin ended with the event. */
    public void hit() {
        long budget = budgetNanos;
        if (budget < maxNanos) {
            budgetNanos = Math.min(maxNanos, Math.max(stepNanos, budget * 2));
        }
    }

    /** A spin ended without the event: the thread parks. */
    public void miss() {
        long budget = budgetNanos / 2;
        budgetNanos = budget < stepNanos ? 0 : budget;
    }

    /**
     * A parked wait ended {@code waitedNanos} after it began. If a full spin would likely have
     * caught it, the budget goes straight back to the maximum: growing it step by step from a
     * small budget does not work, since a small spin misses a reply that a full one catches, and
     * each miss halves it again (the spin then stayed off in a steady exchange).
     */
    public void parkedWaitEnded(long waitedNanos) {
        if (maxNanos > 0 && waitedNanos < 2 * maxNanos) {
            budgetNanos = maxNanos;
        }
    }
}
