package dev.ferry.rpc.internal.concurrent;

import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads a transport dedicates to reading one exchange at a time (a lane's accepting end): such
 * a thread has nothing else to do while the request it read runs, so the agent runs the request on
 * it, as it would on its warm request thread, instead of handing it to another thread. Unlike
 * {@link NonBlockingThreads}, they may block. The agent makes them (the transport only asks its
 * factory), so the rule "a request delivered on a dedicated thread runs there" is the agent's and
 * holds on every transport.
 *
 * <p>This class is thread-safe; the factories it returns are too.
 */
public final class DedicatedThreads {
    private DedicatedThreads() {
    }

    /**
     * A factory of daemon platform threads named {@code namePrefix-1}, {@code namePrefix-2}, ...,
     * each running {@code onStart} before its task.
     */
    public static ThreadFactory factory(String namePrefix, Runnable onStart) {
        Objects.requireNonNull(namePrefix, "namePrefix");
        Objects.requireNonNull(onStart, "onStart");
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new DedicatedThread(() -> {
                onStart.run();
                task.run();
            }, namePrefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Whether the calling thread came from a {@link #factory} factory. */
    public static boolean current() {
        return Thread.currentThread() instanceof DedicatedThread;
    }

    private static final class DedicatedThread extends Thread implements AgentThreads.AgentThread {
        DedicatedThread(Runnable task, String name) {
            super(task, name);
        }
    }
}
