package dev.ferry.rpc.internal.concurrent;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on a shared delegate executor (grpc's
 * {@code SerializingExecutor}). The agent gives each connection one, so that the work of one
 * connection stays ordered while connections still run in parallel on the same pool.
 *
 * <pre>{@code
 * Executor perConnection = new SerializingExecutor(agentPool);
 * perConnection.execute(() -> handle(request1));   // handle(request2) starts only after this returns
 * perConnection.execute(() -> handle(request2));
 * }</pre>
 *
 * <p>Not reentrant: a task that submits another task does not run it inline; the new task runs
 * after the current one returns (and after the tasks submitted before it), on the same delegate
 * turn. Tasks submitted from different threads are ordered as their {@code execute} calls were.
 * A task that throws is logged and does not stop the tasks after it.
 *
 * <p>One delegate turn runs the queue until it is empty, so a busy instance keeps one delegate
 * thread; give it a delegate with at least as many threads as there are busy instances. If the
 * delegate rejects a turn, the task passed to that {@code execute} is withdrawn and the
 * {@link RejectedExecutionException} is thrown to its submitter.
 *
 * <p>This class is thread-safe.
 */
public final class SerializingExecutor implements Executor {
    private static final Logger log = LoggerFactory.getLogger(SerializingExecutor.class);

    private final Executor delegate;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // True while a turn is scheduled on, or running in, the delegate: the one-at-a-time guarantee.
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Runnable turn = new Turn();

    public SerializingExecutor(Executor delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        tasks.add(task);
        schedule(task);
    }

    /** @param submitted the task to withdraw if the delegate rejects the turn, or null */
    private void schedule(Runnable submitted) {
        if (!scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            delegate.execute(turn);
        } catch (RuntimeException | Error e) {
            if (submitted != null) {
                tasks.remove(submitted);
            }
            scheduled.set(false);
            throw e;
        }
    }

    /** One delegate turn: drains the queue, then hands over if tasks arrived at the last moment. */
    private final class Turn implements Runnable {
        @Override
        public void run() {
            try {
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    try {
                        task.run();
                    } catch (RuntimeException e) {
                        log.error("Task {} threw; continuing with the next task", task, e);
                    }
                }
            } finally {
                scheduled.set(false);
                // A task added after the last poll but before the flag was cleared saw a scheduled
                // turn and did not schedule one; schedule it here so that it cannot be stranded.
                if (!tasks.isEmpty()) {
                    schedule(null);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "SerializingExecutor[" + delegate + "]";
    }
}
