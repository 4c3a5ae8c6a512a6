package dev.ferry.distributed.internal;

import dev.ferry.rpc.RpcAgent;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One agent's distributed autograd contexts (PyTorch's {@code DistAutogradContainer}, which is per
 * process; here per agent, because several agents may share a JVM). Context ids are
 * {@code (workerId << 48) + n}, unique in the group without coordination; contexts of other workers
 * are created here when a message of theirs arrives.
 */
public final class ContextContainer {
    static final long COUNTER_MASK = (1L << 48) - 1;
    private static final PerAgent<ContextContainer> BY_AGENT = new PerAgent<>(ContextContainer::new);

    private final PerAgent.AgentRef agent;
    private final int workerId;
    private final AtomicLong nextContext = new AtomicLong();
    private final AtomicInteger runningPasses = new AtomicInteger();
    private final Map<Long, ContextState> contexts = new ConcurrentHashMap<>();
    private final ReleasedContexts released = new ReleasedContexts();

    private ContextContainer(RpcAgent agent) {
        this.agent = new PerAgent.AgentRef(agent);
        this.workerId = agent.getWorkerInfo().id();
    }

    /** The container of {@code agent}, created on first use. */
    public static ContextContainer of(RpcAgent agent) {
        return BY_AGENT.of(agent);
    }

    /** The agent these contexts belong to. */
    public RpcAgent agent() {
        return agent.get();
    }

    public int workerId() {
        return workerId;
    }

    /** A new context created by this worker. */
    public ContextState create() {
        long id = ((long) workerId << 48) | (nextContext.getAndIncrement() & COUNTER_MASK);
        ContextState state = new ContextState(id, this);
        contexts.put(id, state);
        return state;
    }

    /**
     * The context {@code id} of a message that arrived or is sent here: created if it is another
     * worker's and its first message here; null if it ended here already (a message that came
     * late: after its creator closed the context, or after the creator's release reached this
     * worker). Only {@link #create} makes this worker's own contexts.
     */
    ContextState getOrCreate(long id) {
        if (creatorOf(id) == workerId) {
            return contexts.get(id);
        }
        // checked inside the map's update: a release that tombstones the id first, then removes it,
        // either sees the context made here (and removes it) or keeps it from being made
        return contexts.computeIfAbsent(id, key -> released.contains(key) ? null : new ContextState(key, this));
    }

    /** The context {@code id}; fails as PyTorch does for an unknown id. */
    public ContextState get(long id) {
        ContextState state = contexts.get(id);
        if (state == null) {
            throw new IllegalArgumentException("Could not find autograd context with id: " + id);
        }
        return state;
    }

    /** Drops context {@code id} here (running its release actions); returns it, or null if it was not here. */
    public ContextState remove(long id) {
        ContextState removed = contexts.remove(id);
        if (removed != null) {
            removed.released();
        }
        return removed;
    }

    /**
     * {@link #remove} for the release worker {@code from} sent: a release from the context's creator
     * is remembered, so that a message of the context that it overtook does not bring it back.
     */
    ContextState removeReleasedBy(long id, int from) {
        if (from == creatorOf(id) && from != workerId) {
            released.add(id);
        }
        return remove(id);
    }

    /** Context {@code id} if it is here, else null. */
    public ContextState find(long id) {
        return contexts.get(id);
    }

    /**
     * Releases here, and on the workers each reached, the contexts worker {@code creator} created:
     * it is gone and will never close them.
     */
    void releaseCreatedBy(int creator) {
        released.forgetCreatedBy(creator);
        for (ContextState context : contexts.values()) {
            if (creatorOf(context.id()) == creator && contexts.remove(context.id(), context)) {
                context.released();
                GradientCalls.releaseElsewhere(context, creator);
            }
        }
    }

    /** The worker that created context {@code id} (its id is in the top 16 bits). */
    static int creatorOf(long id) {
        return (int) (id >>> 48);
    }

    /** Runs {@code pass} counted as a backward pass (or part of one) running on this worker. */
    void runPass(Runnable pass) {
        runningPasses.incrementAndGet();
        try {
            pass.run();
        } finally {
            runningPasses.decrementAndGet();
        }
    }

    /**
     * PyTorch's {@code dist_autograd._get_debug_info()}: contexts alive here, backward passes (or parts
     * of passes started by other workers) running here, and the send and receive functions recorded.
     */
    public Map<String, String> debugInfo() {
        long sends = 0;
        long recvs = 0;
        for (ContextState context : contexts.values()) {
            sends += context.sendFunctionIds().size();
            recvs += context.recvFunctionIds().size();
        }
        Map<String, String> info = new LinkedHashMap<>();
        info.put("num_autograd_contexts", Integer.toString(contexts.size()));
        info.put("num_current_backward_passes", Integer.toString(runningPasses.get()));
        info.put("num_send_functions", Long.toString(sends));
        info.put("num_recv_functions", Long.toString(recvs));
        info.put("num_released_contexts_remembered", Integer.toString(released.size()));
        return info;
    }

    /** The contexts alive here (for debug info and tests). */
    public Collection<ContextState> contexts() {
        return contexts.values();
    }
}
