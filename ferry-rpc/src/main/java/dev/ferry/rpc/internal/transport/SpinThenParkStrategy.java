package dev.ferry.rpc.internal.transport;

import dev.ferry.rpc.internal.concurrent.AdaptiveSpin;
import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;

/**
 * An event-loop idle strategy: right after activity (events read, tasks run, a wake-up), the loop
 * polls ({@code epoll_wait} with no timeout) and yields for up to a spin budget, then blocks in
 * {@code epoll_wait} as usual. A reply or request that comes within the window is read without
 * waking a halted CPU (~50–100 µs on this kind of VM), and a task queued by another thread (a
 * send) needs no eventfd wake-up; an idle loop still blocks, so an idle agent uses no CPU.
 *
 * <pre>
 *   activity ──▶ poll, yield, poll … (≤ budget) ──▶ epoll_wait (blocks)
 * </pre>
 *
 * <p>The budget adapts ({@link AdaptiveSpin}): windows that end with nothing halve it, traffic
 * that comes within the maximum restores it, so a loop whose traffic is sparse stops spinning.
 * It yields between polls so that a thread woken onto its CPU (a request's handler, a caller
 * thread) runs at once.
 *
 * <p>One instance per event loop (the factory makes one each); not thread-safe.
 */
final class SpinThenParkStrategy implements SelectStrategy {
    private final AdaptiveSpin spin;
    private long lastActivity = System.nanoTime();
    private long parkedAt;
    private boolean blocked;
    private boolean spinning;

    SpinThenParkStrategy(long spinNanos) {
        this(new AdaptiveSpin(spinNanos));
    }

    SpinThenParkStrategy(AdaptiveSpin spin) {
        this.spin = spin;
    }

    /** A factory of strategies spinning for at most {@code spinNanos}. */
    static SelectStrategyFactory factory(long spinNanos) {
        return () -> new SpinThenParkStrategy(spinNanos);
    }

    @Override
    public int calculateStrategy(IntSupplier selectSupplier, boolean hasTasks) throws Exception {
        long now = System.nanoTime();
        if (blocked) {
            // Woken from epoll_wait: activity, and had the spin lasted the maximum it would have caught it?
            blocked = false;
            spin.parkedWaitEnded(now - parkedAt);
            lastActivity = now;
        }
        if (hasTasks) {
            activity(now);
            return selectSupplier.get();
        }
        if (now - lastActivity >= spin.budgetNanos()) {
            if (spinning) {
                spinning = false;
                spin.miss();
            }
            blocked = true;
            parkedAt = lastActivity;
            return SelectStrategy.SELECT;
        }
        int ready = selectSupplier.get();
        if (ready > 0) {
            activity(now);
            return ready;
        }
        spinning = true;
        if (!spin.yieldUncontended()) {
            // The CPU is busy with other work: stop spinning (the miss is counted) and block.
            spinning = false;
            blocked = true;
            parkedAt = lastActivity;
            return SelectStrategy.SELECT;
        }
        return SelectStrategy.CONTINUE;
    }

    private void activity(long now) {
        if (spinning) {
            spinning = false;
            spin.hit();
        }
        lastActivity = now;
    }
}
