package dev.ferry.rpc.internal.serial;

import org.apache.fory.Fory;
import org.apache.fory.config.ForyBuilder;
import org.apache.fory.resolver.SharedRegistry;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
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

    private final ConcurrentLinkedDeque<Fory> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger idleCount = new AtomicInteger();
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
        Fory fory = idle.pollFirst();
        if (fory == null) {
            return create();
        }
        idleCount.decrementAndGet();
        return fory;
    }

    private void release(Fory fory) {
        if (idleCount.incrementAndGet() <= MAX_IDLE) {
            idle.offerFirst(fory);
        } else {
            idleCount.decrementAndGet();
        }
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
