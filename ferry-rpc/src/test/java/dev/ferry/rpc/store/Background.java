package dev.ferry.rpc.store;

import static org.assertj.core.api.Assertions.fail;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A call run on its own thread, so a test can observe it blocking, release it and collect its
 * outcome, all with bounded waits.
 */
final class Background<T> {
    static final Duration BOUND = Duration.ofSeconds(10);

    private final CompletableFuture<T> result = new CompletableFuture<>();
    private final Thread thread;

    private Background(String name, Callable<T> call) {
        thread = Thread.ofPlatform().daemon().name(name).start(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
    }

    static <T> Background<T> start(String name, Callable<T> call) {
        return new Background<>(name, call);
    }

    /**
     * Returns once the thread is parked (blocked in the call under test), or fails after a bound.
     * Checks the thread's state, which is the observable fact we wait for, rather than sleeping.
     */
    Background<T> awaitBlocked() {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (System.nanoTime() < deadline) {
            Thread.State state = thread.getState();
            if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
                return this;
            }
            if (result.isDone()) {
                fail("call finished instead of blocking: " + result);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        throw new AssertionError("call did not block within " + BOUND + "; state " + thread.getState());
    }

    void interrupt() {
        thread.interrupt();
    }

    boolean isDone() {
        return result.isDone();
    }

    /** The call's result, waiting at most {@link #BOUND}. */
    T join() throws Exception {
        return join(BOUND);
    }

    /** The call's result, waiting at most {@code bound}. */
    T join(Duration bound) throws Exception {
        try {
            return result.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        } catch (TimeoutException e) {
            throw new AssertionError("call did not finish within " + bound, e);
        }
    }
}
