package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.transport.PeerChannel;
import dev.ferry.rpc.internal.wire.Delivery;
import dev.ferry.rpc.internal.wire.OutboundMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(60)
class ReadThrottleTest {

    @Test
    void pausesAtTheHighMarkAndResumesBelowHalf() {
        ReadThrottle throttle = new ReadThrottle(4, Long.MAX_VALUE);
        FakeConnection connection = new FakeConnection();
        for (int i = 0; i < 3; i++) {
            throttle.arrived(connection, 10);
        }
        assertThat(connection.paused).isFalse();
        throttle.arrived(connection, 10);
        assertThat(connection.paused).isTrue();
        assertThat(throttle.pausedConnections()).isEqualTo(1);
        throttle.left(10);
        assertThat(connection.paused).isTrue(); // 3 queued: not yet at half
        throttle.left(10);
        assertThat(connection.paused).isFalse();
        assertThat(throttle.pausedConnections()).isZero();
    }

    /**
     * The handlers finish everything between the reader's decision to pause and its pause: the
     * connection must still end up readable (the resume must not run before the pause it undoes).
     */
    @Test
    void everythingFinishingWhileTheReaderPausesLeavesTheConnectionReadable() throws Exception {
        ReadThrottle throttle = new ReadThrottle(4, Long.MAX_VALUE);
        FakeConnection connection = new FakeConnection();
        connection.beforeFirstPause = () -> {
            Thread finisher = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 4; i++) {
                    throttle.left(1);
                }
            });
            try {
                finisher.join(500); // bounded: with the pause under a lock, the finisher waits for it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        for (int i = 0; i < 4; i++) {
            throttle.arrived(connection, 1);
        }
        assertThat(connection.awaitReadable(10, TimeUnit.SECONDS)).isTrue();
        assertThat(throttle.pausedConnections()).isZero();
    }

    /**
     * One reader (the connection's transport thread) delivers requests while the connection is
     * not paused; several handler threads finish them. A resume must never be lost: the reader
     * always gets going again.
     */
    @Test
    void aResumeIsNeverLostWhileHandlersFinishConcurrently() throws Exception {
        ReadThrottle throttle = new ReadThrottle(8, Long.MAX_VALUE);
        FakeConnection connection = new FakeConnection();
        BlockingQueue<Long> running = new ArrayBlockingQueue<>(64);
        int total = 200_000;
        int handlers = 3;
        CountDownLatch done = new CountDownLatch(handlers);
        for (int h = 0; h < handlers; h++) {
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        long size = running.take();
                        if (size < 0) {
                            return;
                        }
                        throttle.left(size);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
        }
        for (int i = 0; i < total; i++) {
            assertThat(connection.awaitReadable(10, TimeUnit.SECONDS))
                    .as("reading resumed before request %d", i).isTrue();
            throttle.arrived(connection, 1);
            running.put(1L);
        }
        for (int h = 0; h < handlers; h++) {
            running.put(-1L);
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(throttle.queuedRequests()).isZero();
        assertThat(connection.paused).isFalse();
    }

    private static final class FakeConnection implements PeerChannel {
        volatile boolean paused;
        volatile Runnable beforeFirstPause;

        @Override
        public void pauseReading(boolean value) {
            Runnable hook = beforeFirstPause;
            if (value && hook != null) {
                beforeFirstPause = null;
                hook.run();
            }
            synchronized (this) {
                paused = value;
                notifyAll();
            }
        }

        synchronized boolean awaitReadable(long timeout, TimeUnit unit) throws InterruptedException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            while (paused) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        @Override
        public void send(OutboundMessage message, Delivery delivery, Consumer<Throwable> onFailure) {
        }

        @Override
        public boolean isActive() {
            return true;
        }

        @Override
        public void close() {
        }

        @Override
        public String remoteAddress() {
            return "fake";
        }

        @Override
        public Object attachment() {
            return null;
        }

        @Override
        public void attach(Object value) {
        }
    }
}
