package dev.ferry.rpc.internal.transport;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;

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
        return new SingleThreadIoEventLoop(this, executor, ioHandlerFactory) {
            @Override
            protected long deadlineNanos() {
                return nextScheduledTaskDeadlineNanos(); // -1: none, and the I/O handler then blocks
            }
        };
    }
}
