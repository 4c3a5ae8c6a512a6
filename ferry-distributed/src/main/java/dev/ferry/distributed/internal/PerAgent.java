package dev.ferry.distributed.internal;

import dev.ferry.rpc.RpcAgent;

import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.Function;

/**
 * State this module keeps for each agent of the JVM (several may share one), made on first use. The
 * map is weakly keyed, so the state goes with its agent; state that needs its agent keeps it in an
 * {@link AgentRef}, since a value holding its key strongly would keep every agent ever started alive.
 *
 * <p>Thread-safe.
 *
 * @param <T> the state
 */
public final class PerAgent<T> {
    private final Map<RpcAgent, T> byAgent = new WeakHashMap<>();
    private final Function<RpcAgent, T> factory;

    public PerAgent(Function<RpcAgent, T> factory) {
        this.factory = factory;
    }

    /** {@code agent}'s state, made now if it has none. */
    public synchronized T of(RpcAgent agent) {
        return byAgent.computeIfAbsent(agent, factory);
    }

    /** A weak reference to an agent, for the state of that agent. */
    public static final class AgentRef {
        private final WeakReference<RpcAgent> agent;
        private final String worker;

        public AgentRef(RpcAgent agent) {
            this.agent = new WeakReference<>(agent);
            this.worker = agent.getWorkerInfo().name();
        }

        /** The agent; fails if it was collected (its state outlived it). */
        public RpcAgent get() {
            RpcAgent alive = agent.get();
            if (alive == null) {
                throw new IllegalStateException("the agent of worker " + worker + " is gone");
            }
            return alive;
        }
    }
}
