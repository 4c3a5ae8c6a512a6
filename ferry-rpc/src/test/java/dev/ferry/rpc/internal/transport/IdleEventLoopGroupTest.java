package dev.ferry.rpc.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ThreadAwareExecutor;
import io.netty.util.concurrent.Ticker;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What an event loop of each group waits for when it has nothing to do. */
class IdleEventLoopGroupTest {

    private static final long BOUND_SECONDS = 10;

    private final DeadlineRecorder recorder = new DeadlineRecorder();
    private IoEventLoopGroup group;

    @AfterEach
    void shutDown() throws InterruptedException {
        if (group != null) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(BOUND_SECONDS, TimeUnit.SECONDS);
        }
    }

    @Test
    void anIdleLoopBlocksWithoutADeadline() throws Exception {
        group = new IdleEventLoopGroup(1, new DefaultThreadFactory("idle-test"), recorder);

        assertThat(waitWhenIdle()).as("no deadline: the loop blocks until woken").isEqualTo(NO_DEADLINE);
    }

    @Test
    void aLoopWithATaskScheduledWakesAtItsDeadline() throws Exception {
        group = new IdleEventLoopGroup(1, new DefaultThreadFactory("idle-test"), recorder);
        group.next().schedule(() -> { }, 1, TimeUnit.HOURS);

        assertThat(waitWhenIdle()).isBetween(TimeUnit.MINUTES.toNanos(59), TimeUnit.MINUTES.toNanos(61));
    }

    /** Netty's own loops wake at least once a second: the reason for the subclass (see its javadoc). */
    @Test
    void nettysOwnIdleLoopWakesWithinASecond() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("netty-test"), recorder);

        long wait = waitWhenIdle();

        assertThat(wait).isNotEqualTo(NO_DEADLINE);
        assertThat(wait).isLessThanOrEqualTo(TimeUnit.SECONDS.toNanos(1));
    }

    /**
     * Runs a task on the loop, then returns how long the first wait the loop may block in after it
     * may last: from the moment the loop is about to wait to its deadline, both read on the loop's
     * thread (so a descheduled test thread cannot stretch it), or {@link #NO_DEADLINE}.
     */
    private long waitWhenIdle() throws Exception {
        group.next().submit(recorder.waits::clear).get(BOUND_SECONDS, TimeUnit.SECONDS);
        Long wait = recorder.waits.poll(BOUND_SECONDS, TimeUnit.SECONDS);
        assertThat(wait).as("the loop went back to waiting").isNotNull();
        return wait;
    }

    /** A wait without a deadline: until woken. */
    private static final long NO_DEADLINE = Long.MIN_VALUE;

    /** Netty's NIO handler, recording how long every wait that may block may last. */
    private static final class DeadlineRecorder implements IoHandlerFactory {
        final BlockingQueue<Long> waits = new LinkedBlockingQueue<>();
        private final IoHandlerFactory nio = NioIoHandler.newFactory();

        @Override
        public IoHandler newHandler(ThreadAwareExecutor executor) {
            IoHandler delegate = nio.newHandler(executor);
            return new IoHandler() {
                @Override
                public void initialize() {
                    delegate.initialize();
                }

                @Override
                public int run(IoHandlerContext context) {
                    if (context.canBlock()) {
                        long deadline = context.deadlineNanos();
                        // The loops' time base is the system ticker's (both groups use it).
                        waits.add(deadline == -1 ? NO_DEADLINE : deadline - Ticker.systemTicker().nanoTime());
                    }
                    return delegate.run(context);
                }

                @Override
                public void prepareToDestroy() {
                    delegate.prepareToDestroy();
                }

                @Override
                public void destroy() {
                    delegate.destroy();
                }

                @Override
                public IoRegistration register(IoHandle handle) throws Exception {
                    return delegate.register(handle);
                }

                @Override
                public void wakeup() {
                    delegate.wakeup();
                }

                @Override
                public boolean isCompatible(Class<? extends IoHandle> handleType) {
                    return delegate.isCompatible(handleType);
                }
            };
        }
    }
}
