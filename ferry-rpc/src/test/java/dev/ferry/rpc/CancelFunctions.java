package dev.ferry.rpc;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Handlers for {@code DeadlinesAndCancellationTest}: each records what it saw in {@link #probe},
 * which the test replaces before each scenario (the workers share this JVM).
 */
public final class CancelFunctions {
    /** What the handlers of one scenario saw. */
    public static final class Probe {
        /** Counted down when the waiting handler (the last hop) starts. */
        public final CountDownLatch started = new CountDownLatch(1);
        /** Counted down when the waiting handler got {@link InterruptedException}. */
        public final CountDownLatch interrupted = new CountDownLatch(1);
        /** The nested call the middle hop made, once made. */
        public final AtomicReference<RpcFuture<?>> nested = new AtomicReference<>();
        /** How the middle hop's wait for its nested call ended. */
        public final AtomicReference<Throwable> nestedFailure = new AtomicReference<>();
        /** Counted down when the middle hop's wait ended. */
        public final CountDownLatch nestedEnded = new CountDownLatch(1);
        /** Releases {@link #ignoreInterrupts}. */
        public final CompletableFuture<Void> release = new CompletableFuture<>();
        /** Interrupts {@link #ignoreInterrupts} swallowed. */
        public final AtomicInteger ignored = new AtomicInteger();
        /** Handlers of {@link #count} that ran. */
        public final AtomicInteger ran = new AtomicInteger();
    }

    public static volatile Probe probe = new Probe();

    private CancelFunctions() {
    }

    /**
     * The last hop: waits (up to a minute, or until the test releases it) for an interrupt, and
     * says whether it came.
     */
    public static boolean awaitInterrupt() {
        Probe p = probe;
        p.started.countDown();
        try {
            p.release.get(1, java.util.concurrent.TimeUnit.MINUTES);
            return false;
        } catch (InterruptedException e) {
            p.interrupted.countDown();
            return true;
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /** The name of the thread that runs this. */
    public static String threadName() {
        return Thread.currentThread().getName();
    }

    /**
     * The middle hop as {@link #relayAndWait}, with {@code rpcSync}: the calling thread may carry the
     * call on a lane of its own and read the answer there.
     */
    public static boolean relaySync(String to, long ownTimeoutMillis) {
        return relayed(() -> Rpc.current().to(to).withTimeout(Duration.ofMillis(ownTimeoutMillis))
                .rpcSync(CancelFunctions::awaitInterrupt));
    }

    /** The middle hop as {@link #relaySync}, to {@link #countRun}. */
    public static int relaySyncToCount(String to) {
        return relayed(() -> Rpc.current().rpcSync(to, CancelFunctions::countRun));
    }

    /** Makes the middle hop's nested call, recording how its wait ended. */
    private static <T> T relayed(java.util.function.Supplier<T> nested) {
        Probe p = probe;
        try {
            return nested.get();
        } catch (RuntimeException e) {
            p.nestedFailure.set(e);
            throw e;
        } finally {
            p.nestedEnded.countDown();
        }
    }

    /** The middle hop: calls {@link #awaitInterrupt} on {@code to} with a timeout of its own, and waits. */
    public static boolean relayAndWait(String to, long ownTimeoutMillis) {
        Probe p = probe;
        RpcFuture<Boolean> nested = Rpc.current().to(to).withTimeout(Duration.ofMillis(ownTimeoutMillis))
                .rpcAsync(CancelFunctions::awaitInterrupt);
        p.nested.set(nested);
        try {
            return nested.await();
        } catch (RuntimeException e) {
            p.nestedFailure.set(nested.done() && nested.failed() ? nested.exceptionNow() : e);
            throw e;
        } finally {
            p.nestedEnded.countDown();
        }
    }

    /**
     * An asynchronous middle hop: answers once a first quick call to {@code to} returns, and from
     * that call's continuation starts {@link #awaitInterrupt} there, which outlives the answer.
     */
    @AsyncExecution
    public static RpcFuture<String> answerThenCallOn(String to, long ownTimeoutMillis) {
        Probe p = probe;
        return Rpc.rpcAsync(to, Ops::noop, 1).then(first -> {
            RpcFuture<Boolean> nested = Rpc.current().to(to).withTimeout(Duration.ofMillis(ownTimeoutMillis))
                    .rpcAsync(CancelFunctions::awaitInterrupt);
            p.nested.set(nested);
            nested.addDoneCallback(done -> {
                p.nestedFailure.set(done.failed() ? done.exceptionNow() : null);
                p.nestedEnded.countDown();
            });
            return "answered";
        });
    }

    /** A handler that swallows interrupts and runs until the test releases it. */
    public static String ignoreInterrupts() {
        Probe p = probe;
        p.started.countDown();
        while (true) {
            try {
                p.release.get();
                return "released";
            } catch (InterruptedException e) {
                p.ignored.incrementAndGet();
            } catch (ExecutionException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Counts that it ran; {@code rref} only travels (an RRef argument the callee must accept). */
    public static int count(RRef<?> rref) {
        return probe.ran.incrementAndGet();
    }

    /** Counts that it ran. */
    public static int countRun() {
        return probe.ran.incrementAndGet();
    }

    /** Counts that it ran; {@code rref} and {@code data} only travel (data large: it goes in chunks). */
    public static int countLarge(RRef<?> rref, byte[] data) {
        return probe.ran.incrementAndGet();
    }

    /**
     * Creates an RRef on {@code owner} whose value never comes ({@link #awaitInterrupt}) and waits
     * for it, closing the reference however the wait ends.
     */
    public static boolean remoteAndWait(String owner) {
        Probe p = probe;
        try (RRef<Boolean> rref = Rpc.current().to(owner).withTimeout(Duration.ofMinutes(1))
                .remote(CancelFunctions::awaitInterrupt)) {
            return rref.toHere();
        } catch (RuntimeException e) {
            p.nestedFailure.set(e);
            throw e;
        } finally {
            p.nestedEnded.countDown();
        }
    }
}
