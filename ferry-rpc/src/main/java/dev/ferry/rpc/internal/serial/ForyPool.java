package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.internal.concurrent.AgentThreads;
import org.apache.fory.Fory;
import org.apache.fory.config.ForyBuilder;
import org.apache.fory.resolver.SharedRegistry;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Fory instances for many threads, growing on demand and never blocking. Fory's own
 * {@code ThreadPoolFory} has a fixed size and blocks a borrower when all instances are in use;
 * Ferry borrows re-entrantly (decoding an RRef sends a control message, which encodes) and on
 * transport threads that must never block, so a fixed pool deadlocks under load. Instances share
 * one {@link SharedRegistry}, so type metadata is built once.
 *
 * <p>An agent's own threads ({@link AgentThreads}: event loops, the warm request thread) each keep
 * an instance of their own, built on first use, and fall back to the shared ones only when they borrow
 * re-entrantly. Otherwise the instances a thread finds free depend on what the other threads are
 * doing at the time: under W2's window of 64 calls, the caller's event loop decoding replies while
 * its application thread encoded requests first needed a second instance after ~30,000 calls,
 * built it mid-run, and the JIT recompiled the borrowing code it had compiled for one instance
 * (~20 ms of compilation on a 2-CPU machine, in a 60 ms measurement).
 *
 * <p>This class is thread-safe.
 */
final class ForyPool {
    /** Idle instances beyond this many are dropped instead of kept. */
    private static final int MAX_IDLE = 64;

    /**
     * Idle instances in slots rather than a linked queue, whose node per release was a tenth of
     * what a small call allocated. Borrowers take the first filled slot, releasers fill the first
     * empty one: with a few threads at a time both stop after a slot or two.
     */
    private final AtomicReferenceArray<Fory> idle = new AtomicReferenceArray<>(MAX_IDLE);
    private final SharedRegistry shared = new SharedRegistry();
    private final ForyBuilder builder;
    private final Consumer<Fory> configure;
    /** The instance an agent thread keeps (see the class comment). */
    private final ThreadLocal<Kept> kept = new ThreadLocal<>();

    ForyPool(ForyBuilder builder, Consumer<Fory> configure) {
        this.builder = builder.withSharedRegistry(shared);
        this.configure = configure;
        release(create()); // fail fast on a bad configuration
    }

    <R> R execute(Function<Fory, R> action) {
        if (AgentThreads.current()) {
            Kept own = kept.get();
            if (own == null) {
                own = new Kept(create()); // not a shared one: the pool stays as it was
                kept.set(own);
            }
            if (!own.inUse) {
                own.inUse = true;
                try {
                    return action.apply(own.fory);
                } finally {
                    own.inUse = false;
                }
            }
        }
        Fory fory = borrow();
        try {
            return action.apply(fory);
        } finally {
            release(fory);
        }
    }

    private Fory borrow() {
        for (int i = 0; i < MAX_IDLE; i++) {
            Fory fory = idle.get(i);
            if (fory != null && idle.compareAndSet(i, fory, null)) {
                return fory;
            }
        }
        return create();
    }

    private void release(Fory fory) {
        for (int i = 0; i < MAX_IDLE; i++) {
            if (idle.get(i) == null && idle.compareAndSet(i, null, fory)) {
                return;
            }
        }
        // all slots full: drop it
    }

    private Fory create() {
        Fory fory;
        synchronized (builder) {
            fory = builder.build();
        }
        configure.accept(fory);
        return fory;
    }

    /** An agent thread's own instance; {@code inUse} while it encodes or decodes with it (that thread only). */
    private static final class Kept {
        final Fory fory;
        boolean inUse;

        Kept(Fory fory) {
            this.fory = fory;
        }
    }
}
