package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction2;
import dev.ferry.rpc.RpcFunction3;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The all-gather protocol (PyTorch's {@code _all_gather}): every worker sends its value to the
 * leader (rank 0); when the leader has all of them it sends the whole map to every follower.
 * Gathers are numbered in the order each worker starts them, so concurrent or repeated gathers
 * line up across workers.
 *
 * <pre>
 *   follower ──gatherToLeader(id, name, value)──▶ leader   (once per follower)
 *   leader   ──broadcastToFollowers(id, map)────▶ follower (when all have arrived)
 * </pre>
 */
final class AllGathers {
    /** One gather in progress on this worker. */
    private static final class State {
        final Map<String, Object> gathered = new HashMap<>();
        final CompletableFuture<Map<String, Object>> complete = new CompletableFuture<>();
    }

    private static final RpcFunction3<String, String, Object, Boolean> GATHER = SystemCalls::gatherToLeader;
    private static final RpcFunction2<String, Map<String, Object>, Boolean> BROADCAST = SystemCalls::broadcastToFollowers;

    private final DefaultRpcAgent agent;
    private final AtomicLong sequence = new AtomicLong();
    private final ConcurrentHashMap<String, State> states = new ConcurrentHashMap<>();

    AllGathers(DefaultRpcAgent agent) {
        this.agent = agent;
    }

    Map<String, Object> run(Object value, Duration timeout) {
        WorkerDirectory directory = agent.directory();
        String id = "gather-" + sequence.getAndIncrement();
        WorkerInfo self = directory.self();
        WorkerInfo leader = directory.byId(0);
        try {
            if (self.equals(leader)) {
                contribute(id, self.name(), value);
                Map<String, Object> all = await(state(id).complete, timeout, id, "values from every worker");
                broadcast(id, all, directory, timeout);
                return all;
            }
            agent.invokeSystem(leader, GATHER, new Object[] {id, self.name(), value}, timeout).await();
            return await(state(id).complete, timeout, id, "the gathered values from leader " + leader.name());
        } finally {
            states.remove(id);
        }
    }

    private void broadcast(String id, Map<String, Object> all, WorkerDirectory directory, Duration timeout) {
        List<WorkerInfo> followers = new ArrayList<>();
        List<RpcFuture<Object>> replies = new ArrayList<>();
        for (WorkerInfo worker : directory.workers()) {
            if (worker.id() != 0) {
                followers.add(worker);
                replies.add(agent.invokeSystem(worker, BROADCAST, new Object[] {id, all}, timeout));
            }
        }
        List<String> failed = new ArrayList<>();
        RpcException first = null;
        for (int i = 0; i < replies.size(); i++) {
            try {
                replies.get(i).await();
            } catch (RpcException e) {
                failed.add(followers.get(i).name());
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw new RpcException(first.code(), "Followers " + failed + " timed out or failed in allGather " + id
                    + " after " + describe(timeout) + ". The first exception is " + first.getMessage(), first);
        }
    }

    void contribute(String id, String name, Object value) {
        State state = state(id);
        Map<String, Object> complete = null;
        synchronized (state) {
            if (state.gathered.containsKey(name)) {
                throw new RpcException(RpcException.Code.ILLEGAL_STATE, name + " reported gather " + id + " twice");
            }
            state.gathered.put(name, value);
            if (state.gathered.size() == agent.directory().size()) {
                complete = Collections.unmodifiableMap(new HashMap<>(state.gathered));
            }
        }
        if (complete != null) {
            state.complete.complete(complete);
        }
    }

    void deliver(String id, Map<String, Object> gathered) {
        if (!state(id).complete.complete(Collections.unmodifiableMap(new HashMap<>(gathered)))) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, "gather " + id + " delivered twice");
        }
    }

    /** Fails every gather in progress (on shutdown). */
    void failAll(RpcException error) {
        states.values().forEach(state -> state.complete.completeExceptionally(error));
    }

    private State state(String id) {
        return states.computeIfAbsent(id, key -> new State());
    }

    private Map<String, Object> await(CompletableFuture<Map<String, Object>> future, Duration timeout, String id,
                                      String what) {
        try {
            return timeout.isZero() ? future.get() : future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            long rejected = agent.authRejections();
            throw new RpcException(RpcException.Code.TIMEOUT, agent.directory().self().name() + " timed out in allGather "
                    + id + " after " + describe(timeout) + " waiting for " + what + (rejected == 0 ? ""
                    : " (" + rejected + " connection" + (rejected == 1 ? "" : "s")
                    + " failed authentication meanwhile: do all workers have the same authToken?)"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(RpcException.Code.INTERNAL, "interrupted in allGather " + id, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RpcException rpc) {
                throw rpc.rethrowable();
            }
            throw new RpcException(RpcException.Code.INTERNAL, "allGather " + id + " failed", e.getCause());
        }
    }

    private static String describe(Duration timeout) {
        return timeout.isZero() ? "no timeout" : String.format("%.2f seconds", timeout.toNanos() / 1e9);
    }
}
