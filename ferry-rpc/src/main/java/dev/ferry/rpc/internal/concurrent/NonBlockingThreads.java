package dev.ferry.rpc.internal.concurrent;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * Threads that must never block: the transport's event loops. Blocking one of them on an RPC
 * future would deadlock it, because the reply that completes the future arrives on that same
 * thread. {@link dev.ferry.rpc.RpcFuture#await()} asks {@link #currentIsNonBlocking()} and throws
 * at once instead of hanging, as Netty's {@code DefaultPromise.checkDeadLock} does.
 *
 * <pre>{@code
 * ThreadFactory threads = NonBlockingThreads.factory("ferry-io");
 * EventLoopGroup group = new MultiThreadIoEventLoopGroup(4, threads, NioIoHandler.newFactory());
 * }</pre>
 *
 * <p>The threads are Netty {@link FastThreadLocalThread}s (so Netty's fast thread-locals work on
 * them), daemons (so a forgotten shutdown does not keep the JVM alive), {@link AgentThreads}, and
 * tell BlockHound-style tools that blocking calls are not permitted.
 *
 * <p>This class is thread-safe; the factories it returns are too.
 */
public final class NonBlockingThreads {
    private NonBlockingThreads() {
    }

    /**
     * A factory of non-blocking daemon threads named {@code namePrefix-1}, {@code namePrefix-2}, ...
     */
    public static ThreadFactory factory(String namePrefix) {
        Objects.requireNonNull(namePrefix, "namePrefix");
        return new Factory(namePrefix);
    }

    /** Whether {@code thread} was created by a {@link #factory(String)} factory. */
    public static boolean isNonBlocking(Thread thread) {
        return thread instanceof NonBlockingThread;
    }

    /** Whether the calling thread was created by a {@link #factory(String)} factory. */
    public static boolean currentIsNonBlocking() {
        return Thread.currentThread() instanceof NonBlockingThread;
    }

    private static final class Factory implements ThreadFactory {
        private final String namePrefix;
        private final AtomicInteger count = new AtomicInteger();

        Factory(String namePrefix) {
            this.namePrefix = namePrefix;
        }

        @Override
        public Thread newThread(Runnable task) {
            Thread thread = new NonBlockingThread(task, namePrefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        }

        @Override
        public String toString() {
            return "NonBlockingThreads.factory(" + namePrefix + ")";
        }
    }

    private static final class NonBlockingThread extends FastThreadLocalThread implements AgentThreads.AgentThread {
        NonBlockingThread(Runnable task, String name) {
            super(task, name);
        }

        @Override
        public boolean permitBlockingCalls() {
            return false;
        }
    }
}
