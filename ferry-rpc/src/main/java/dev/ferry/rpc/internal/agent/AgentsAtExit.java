package dev.ferry.rpc.internal.agent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Explains, as the JVM exits, a worker that leaves its group without shutting down: an agent still
 * running whose starting thread has ended (a program whose {@code main} returned or threw without
 * {@code Rpc.shutdown()}). The agent's threads are daemons, so that a forgotten shutdown never keeps
 * a JVM alive; such a worker vanishes at once, and its peers only see a lost connection. The
 * warning, on the worker that left, says why and what to write instead.
 *
 * <p>Nothing is shut down here. Shutdown hooks run in no order, and the program's own hook may be
 * closing the agent gracefully; an agent whose starter still runs at exit (the program called
 * {@code System.exit}, or a signal came) is left alone too: that exit was asked for.
 *
 * <p>Thread-safe. One JVM shutdown hook, installed with the first agent.
 */
final class AgentsAtExit {

    private static final Logger log = LoggerFactory.getLogger(AgentsAtExit.class);

    /** Running agents and the thread each was started on. */
    private static final Map<DefaultRpcAgent, Thread> RUNNING = new ConcurrentHashMap<>();
    private static final AtomicBoolean HOOK_INSTALLED = new AtomicBoolean();

    private AgentsAtExit() {
    }

    /** {@code agent} has started, on the calling thread. */
    static void started(DefaultRpcAgent agent) {
        RUNNING.put(agent, Thread.currentThread());
        if (HOOK_INSTALLED.compareAndSet(false, true)) {
            try {
                Runtime.getRuntime().addShutdownHook(
                        Thread.ofPlatform().name("ferry-exit-check").unstarted(AgentsAtExit::explainForgotten));
            } catch (IllegalStateException e) {
                log.debug("the JVM is already exiting: no check of forgotten shutdowns");
            }
        }
    }

    /** {@code agent} began shutting down. */
    static void stopped(DefaultRpcAgent agent) {
        RUNNING.remove(agent);
    }

    private static void explainForgotten() {
        RUNNING.forEach((agent, starter) -> {
            if (agent.isRunning() && !starter.isAlive()) {
                log.warn("{}: the JVM exits with this worker's RPC agent still running, and the thread that started"
                        + " it ({}) has ended without shutting it down. Its peers lose it now: their calls to it fail"
                        + " UNAVAILABLE and their graceful shutdown goes on without it. End that thread's work with"
                        + " Rpc.shutdown() (or close the agent), which waits until every worker is done.",
                        agent.getWorkerInfo().name(), starter.getName());
            }
        });
    }
}
