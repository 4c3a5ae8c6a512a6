package dev.ferry.distributed.internal;

import dev.ferry.distributed.internal.ReleaseSender.Release;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.RetriedSends;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One agent's distributed autograd contexts (PyTorch's {@code DistAutogradContainer}, which is per
 * process; here per agent, because several agents may share a JVM). Context ids are
 * {@code (workerId << 48) + n}, unique in the group without coordination; contexts of other workers
 * are created here when a message of theirs arrives. Every message and release of a context names
 * its creator's incarnation too, since a restarted worker's ids start over.
 *
 * <p>A context leaves this worker when its creator closes it (this worker's own), when a release of
 * it comes (another's; passed on to the workers it reached from here), or when its creator is lost.
 */
public final class ContextContainer {
    static final long COUNTER_MASK = (1L << 48) - 1;
    private static final PerAgent<ContextContainer> BY_AGENT = new PerAgent<>(ContextContainer::new);

    private final PerAgent.AgentRef agent;
    private final int workerId;
    private final long incarnation;
    private final AtomicInteger runningPasses = new AtomicInteger();
    private final Map<Long, ContextState> contexts = new ConcurrentHashMap<>();
    private final ReleasedContexts released = new ReleasedContexts();
    private final ReleaseSender releases;
    /** The counts of this worker's own contexts still open, and the next count; guarded by {@code open}. */
    private final NavigableSet<Long> open = new TreeSet<>();
    private long nextContext;

    private ContextContainer(RpcAgent agent) {
        this.agent = new PerAgent.AgentRef(agent);
        this.workerId = agent.getWorkerInfo().id();
        this.incarnation = agent.getIncarnation();
        this.releases = new ReleaseSender(new ReleasePeers(this.agent), RetriedSends::onVirtualThread);
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
        long id;
        synchronized (open) {
            long count = nextContext++ & COUNTER_MASK;
            open.add(count);
            id = ((long) workerId << 48) | count;
        }
        ContextState state = new ContextState(new ContextKey(id, incarnation), this);
        contexts.put(id, state);
        return state;
    }

    /**
     * The context of a message that arrived or is sent here: created if it is another worker's and
     * its first message here; null if the message comes after the context ended here (after its
     * creator closed it, or after a release of it reached this worker: {@link ReleasedContexts}),
     * or if it is of an earlier incarnation of its creator. Only {@link #create} makes this
     * worker's own contexts.
     */
    ContextState getOrCreate(ContextKey key) {
        ContextState held = contexts.get(key.id());
        if (held != null && held.key().equals(key)) {
            return held;
        }
        if (key.creator() == workerId) {
            return null; // closed, or of this worker's earlier incarnation
        }
        if (released.seen(key.creator(), key.creatorIncarnation())) {
            endEndedOf(key.creator(), -1); // a later incarnation of its creator: the earlier ones' contexts are over
        }
        ContextState[] made = new ContextState[1];
        ContextState[] displaced = new ContextState[1];
        // checked inside the map's update: a release that tombstones the id first, then removes it,
        // either sees the context made here (and removes it) or keeps it from being made
        contexts.compute(key.id(), (id, current) -> {
            if (current != null && current.key().equals(key)) {
                made[0] = current;
                return current;
            }
            if (released.ended(key)) {
                return current; // current is of a later incarnation than this late message, if any
            }
            displaced[0] = current; // of an earlier incarnation: over
            made[0] = new ContextState(key, this);
            return made[0];
        });
        if (displaced[0] != null) {
            end(displaced[0], -1);
        }
        return made[0];
    }

    /** The context {@code id}; fails as PyTorch does for an unknown id. */
    public ContextState get(long id) {
        ContextState state = contexts.get(id);
        if (state == null) {
            throw new IllegalArgumentException("Could not find autograd context with id: " + id);
        }
        return state;
    }

    /** Context {@code id} if it is here, else null. */
    public ContextState find(long id) {
        return contexts.get(id);
    }

    /**
     * Closes {@code state}, one of this worker's own contexts: drops it here (running its release
     * actions) and releases it on every worker it reached. Does nothing if it is not here any more.
     */
    public void close(ContextState state) {
        if (!contexts.remove(state.id(), state)) {
            return;
        }
        long closedBelow;
        synchronized (open) {
            open.remove(state.id() & COUNTER_MASK);
            closedBelow = open.isEmpty() ? nextContext & COUNTER_MASK : open.first();
        }
        state.released();
        passOn(state, new Release(state.key(), closedBelow), -1);
    }

    /**
     * A release of {@code context} came from worker {@code from}: it is remembered (a message of the
     * context that it overtook must not bring it back), and the context, if here, ends here and is
     * released on the workers it reached from here. So do the contexts of the same creator below
     * its mark (closed by the creator, their own releases still on the way or never coming), and
     * those of its earlier incarnations. A release of this worker's own context (of an earlier
     * incarnation of it) does nothing.
     */
    void released(ContextKey context, long closedBelow, int from) {
        if (context.creator() == workerId) {
            return;
        }
        if (released.add(context, closedBelow)) {
            endEndedOf(context.creator(), from);
        }
        ContextState held = contexts.get(context.id());
        if (held != null && held.key().equals(context) && contexts.remove(context.id(), held)) {
            end(held, from);
        }
    }

    /**
     * Releases here, and on the workers each reached, the contexts worker {@code creator} created:
     * it is gone and will never close them (a message of one that comes later runs outside it).
     * What waits to be sent to it is dropped: it holds nothing any more.
     */
    void peerGone(int creator) {
        releases.forget(creator);
        for (ContextState context : contexts.values()) {
            if (context.key().creator() == creator && contexts.remove(context.id(), context)) {
                released.add(context.key(), 0);
                end(context, creator);
            }
        }
    }

    /** Ends here the contexts of {@code creator} that {@link ReleasedContexts} says ended. */
    private void endEndedOf(int creator, int except) {
        for (ContextState context : contexts.values()) {
            if (context.key().creator() == creator && released.ended(context.key())
                    && contexts.remove(context.id(), context)) {
                end(context, except);
            }
        }
    }

    /** {@code context}, just removed here: runs its release actions and passes its release on. */
    private void end(ContextState context, int except) {
        context.released();
        ContextKey key = context.key();
        passOn(context, new Release(key, released.closedBelow(key.creator(), key.creatorIncarnation())), except);
    }

    /** Sends {@code release} to every worker {@code context} reached from here, but {@code except}. */
    private void passOn(ContextState context, Release release, int except) {
        for (int worker : context.knownWorkerIds()) {
            if (worker != except && worker != workerId) {
                releases.send(worker, release);
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
     * of passes started by other workers) running here, and the send and receive functions recorded;
     * and Ferry's releases remembered and waiting to be delivered.
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
        info.put("num_releases_undelivered", Integer.toString(releases.waiting()));
        return info;
    }

    /** The contexts alive here (for debug info and tests). */
    public Collection<ContextState> contexts() {
        return contexts.values();
    }

    /** Where an agent's releases go: the members of its group, by {@link GradientCalls#release} calls. */
    private record ReleasePeers(PerAgent.AgentRef agent) implements ReleaseSender.Peers {

        @Override
        public boolean reachable(int worker) {
            RpcAgent self;
            try {
                self = agent.get();
            } catch (IllegalStateException collected) {
                return false;
            }
            // Not isRunning(): a worker that closes its last context and shuts down at once (every
            // training loop's end) still owes that release, and a graceful shutdown still sends;
            // the members are unknown (SHUTDOWN) only once the agent is closed.
            try {
                for (WorkerInfo member : self.getWorkerInfos()) {
                    if (member.id() == worker) {
                        return true;
                    }
                }
            } catch (RpcException closed) {
                // shut down meanwhile
            }
            return false;
        }

        @Override
        public String name(int worker) {
            try {
                return agent.get().getWorkerInfo(worker).name();
            } catch (RuntimeException gone) {
                return "worker id " + worker;
            }
        }

        @Override
        public RpcFuture<?> send(int worker, List<Release> batch) {
            return GradientCalls.sendReleases(agent.get(), worker, batch);
        }
    }
}
