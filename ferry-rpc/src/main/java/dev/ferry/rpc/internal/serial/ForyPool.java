package dev.ferry.rpc.internal.serial;

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

    ForyPool(ForyBuilder builder, Consumer<Fory> configure) {
        this.builder = builder.withSharedRegistry(shared);
        this.configure = configure;
        release(create()); // fail fast on a bad configuration
    }

    <R> R execute(Function<Fory, R> action) {
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
}
