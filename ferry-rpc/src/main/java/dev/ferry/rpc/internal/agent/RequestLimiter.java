package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.concurrent.ManagedBlocking;

import java.util.concurrent.Semaphore;

/**
 * Bounds how many requests run at once on a worker ({@code numWorkerThreads}). A request that
 * blocks on a Ferry future gives its permit back for the duration ({@link ManagedBlocking}), so
 * nested calls can never use up the permits and deadlock the worker.
 */
final class RequestLimiter implements ManagedBlocking.Permit {
    private final Semaphore permits;
    private final int size;

    RequestLimiter(int size) {
        this.size = size;
        this.permits = new Semaphore(size);
    }

    /** Takes a permit for the current thread and binds it so blocking waits give it back. */
    void enter() {
        permits.acquireUninterruptibly();
        ManagedBlocking.bind(this);
    }

    /** Returns the current thread's permit. */
    void exit() {
        ManagedBlocking.unbind();
        permits.release();
    }

    @Override
    public void release() {
        permits.release();
    }

    @Override
    public void reacquire() {
        permits.acquireUninterruptibly();
    }

    /** Requests running now (not counting those blocked on nested calls). */
    int running() {
        return size - permits.availablePermits();
    }
}
