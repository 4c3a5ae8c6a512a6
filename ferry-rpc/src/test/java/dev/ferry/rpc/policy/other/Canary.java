package dev.ferry.rpc.policy.other;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Outside the application's packages, like {@link Unmarked}, and counting its runs: a fuzzer sends
 * calls of it (and mutations of them) to a worker whose policy refuses it, and checks it never ran.
 */
public final class Canary {
    /** Times {@link #sing} ran, anywhere in this JVM. */
    public static final AtomicInteger RUNS = new AtomicInteger();

    private Canary() {
    }

    public static int sing(int x) {
        RUNS.incrementAndGet();
        return x;
    }
}
