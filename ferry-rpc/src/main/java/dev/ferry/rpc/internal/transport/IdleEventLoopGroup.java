package dev.ferry.rpc.internal.transport;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;

import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/**
 * Netty's event-loop group, except that a loop with nothing scheduled blocks until there is I/O or
 * a task, as Netty 4.1's loops did. Netty 4.2's {@code SingleThreadEventExecutor} gives every loop
 * a deadline at most a second away when none of its tasks is scheduled ({@code
 * SCHEDULE_PURGE_INTERVAL}), so each idle loop of each worker wakes once a second: on the 2-vCPU VM
 * each such wake-up cost 1-4.5 ms of CPU (the wake of a halted vCPU, the loop's code run cold, the
 * compilations it queued), 5-12 ms of an idle worker's 2 s in W1's idle probe. Nothing is lost
 * without it: a loop with a task scheduled still wakes at the earliest deadline, and a task
 * cancelled on another thread (whose removal Netty queues without waking the loop) keeps its
 * deadline until it is removed, so the loop wakes for it at the latest then, as before.
 *
 * <p>Its loops report their termination without Netty's {@code GlobalEventExecutor} (see
 * {@link #newChild}), so closing a transport starts no thread that outlives it.
 *
 * <p>Only the epoll handler reads this deadline; the NIO handler (off Linux) waits by {@code
 * delayNanos}, which keeps Netty's one-second bound.
 *
 * <p>Thread-safe, as its superclass.
 */
final class IdleEventLoopGroup extends MultiThreadIoEventLoopGroup {

    IdleEventLoopGroup(int threads, ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
        super(threads, threadFactory, ioHandlerFactory);
    }

    @Override
    protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
        // Reported terminated by the loop's own thread, as its last act: Netty's own termination
        // future notifies the group's listener on GlobalEventExecutor, whose thread is not a daemon
        // and lingers for its quiet period (at least a second) after its last task, so each worker
        // JVM waited up to a second after main returned (one loop's notice could end that thread
        // just before the next loop's started it again, for a whole second).
        Promise<Void> terminated = ImmediateEventExecutor.INSTANCE.newPromise();
        Executor reporting = loop -> executor.execute(() -> {
            try {
                loop.run();
            } finally {
                terminated.trySuccess(null);
            }
        });
        return new SingleThreadIoEventLoop(this, reporting, ioHandlerFactory) {
            @Override
            protected long deadlineNanos() {
                return nextScheduledTaskDeadlineNanos(); // -1: none, and the I/O handler then blocks
            }

            @Override
            public Future<?> terminationFuture() {
                return terminated;
            }
        };
    }
}
