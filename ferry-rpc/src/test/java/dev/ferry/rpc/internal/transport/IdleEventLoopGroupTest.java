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

        assertThat(deadlineWhenIdle()).as("no deadline: the loop blocks until woken").isEqualTo(-1L);
    }

    @Test
    void aLoopWithATaskScheduledWakesAtItsDeadline() throws Exception {
        group = new IdleEventLoopGroup(1, new DefaultThreadFactory("idle-test"), recorder);
        long scheduledAt = group.next().ticker().nanoTime(); // the loop's time base
        group.next().schedule(() -> { }, 1, TimeUnit.HOURS);

        long deadline = deadlineWhenIdle();

        assertThat(deadline - scheduledAt).isBetween(TimeUnit.MINUTES.toNanos(59), TimeUnit.MINUTES.toNanos(61));
    }

    /** Netty's own loops wake at least once a second: the reason for the subclass (see its javadoc). */
    @Test
    void nettysOwnIdleLoopWakesWithinASecond() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("netty-test"), recorder);
        long before = group.next().ticker().nanoTime();

        long deadline = deadlineWhenIdle();

        assertThat(deadline).isNotEqualTo(-1L);
        assertThat(deadline - before).isLessThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(1_100));
    }

    /** Runs a task on the loop, then returns the deadline of the first wait the loop may block in after it. */
    private long deadlineWhenIdle() throws Exception {
        group.next().submit(recorder.deadlines::clear).get(BOUND_SECONDS, TimeUnit.SECONDS);
        Long deadline = recorder.deadlines.poll(BOUND_SECONDS, TimeUnit.SECONDS);
        assertThat(deadline).as("the loop went back to waiting").isNotNull();
        return deadline;
    }

    /** Netty's NIO handler, recording the deadline of every wait that may block. */
    private static final class DeadlineRecorder implements IoHandlerFactory {
        final BlockingQueue<Long> deadlines = new LinkedBlockingQueue<>();
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
                        deadlines.add(context.deadlineNanos());
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
