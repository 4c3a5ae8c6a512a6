package dev.ferry.rpc.internal.concurrent;

/**
 * Threads that live as long as the agent that started them: its transport's event loops
 * ({@link NonBlockingThreads}) and its warm request thread. There are few of them and they run
 * most of the agent's work, so per-thread caches pay off on them (each keeps a Fory instance of its
 * own, for example), where on application threads, which may come and go per call, they would not.
 *
 * <p>This class is thread-safe.
 */
public final class AgentThreads {
    private AgentThreads() {
    }

    /** Implemented by the classes of the threads this class knows. */
    interface AgentThread {
    }

    /** An unstarted daemon platform thread of the agent, running {@code task}. */
    public static Thread unstarted(String name, Runnable task) {
        Thread thread = new PlatformAgentThread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    /** Whether the calling thread is one of an agent's own (see the class comment). */
    public static boolean current() {
        return Thread.currentThread() instanceof AgentThread;
    }

    private static final class PlatformAgentThread extends Thread implements AgentThread {
        PlatformAgentThread(Runnable task, String name) {
            super(task, name);
        }
    }
}
