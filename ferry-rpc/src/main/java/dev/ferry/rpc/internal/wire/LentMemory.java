package dev.ferry.rpc.internal.wire;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.nio.ByteBuffer;

/**
 * One range of received memory lent to the application through a carrier buffer, as every lender
 * keeps it (the receive pool, shared memory): a phantom reference to the carrier, so the range
 * comes back when the carrier is unreachable, and the {@link Loans.Loan} bookkeeping that lets it
 * come back earlier. The memory returns early ({@link #returnEarly}) once the application released
 * it and no send refers to it any more:
 *
 * <pre>
 *   release()          ── pinned by a send? ──no──▶ returnEarly()
 *                                            └yes─▶ the last unpin() returns it
 *   releaseAfterSend() ──▶ the next send's unpin() returns it
 * </pre>
 *
 * <p>Thread-safe: the state is guarded by this object; {@link #returnEarly} runs outside that
 * lock, at most once.
 */
public abstract class LentMemory extends PhantomReference<ByteBuffer> implements Loans.Loan {
    /** Sends whose frames refer to the memory now. */
    private int pins;
    private boolean released;
    private boolean afterSend;

    protected LentMemory(ByteBuffer carrier, ReferenceQueue<? super ByteBuffer> queue) {
        super(carrier, queue);
    }

    /**
     * The application is done with the memory and no send refers to it: make its views unusable and
     * take the range back now. Called once, on the releasing thread.
     */
    protected abstract void returnEarly();

    @Override
    public final synchronized boolean pin() {
        if (released) {
            return false;
        }
        pins++;
        return true;
    }

    @Override
    public final void unpin() {
        synchronized (this) {
            if (--pins > 0 || !afterSend && !released) {
                return;
            }
            released = true;
        }
        returnEarly();
    }

    @Override
    public final boolean release() {
        synchronized (this) {
            if (released) {
                return false;
            }
            released = true;
            if (pins > 0) {
                return true; // the last unpin returns it
            }
        }
        returnEarly();
        return true;
    }

    @Override
    public final synchronized boolean releaseAfterSend() {
        if (released) {
            return false;
        }
        afterSend = true;
        return true;
    }
}
