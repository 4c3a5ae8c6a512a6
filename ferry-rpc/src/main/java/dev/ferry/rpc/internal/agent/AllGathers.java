package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction2;
import dev.ferry.rpc.RpcFunction4;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The all-gather protocol (PyTorch's {@code _all_gather} and {@code AllGatherStates}): every member
 * sends its value to the leader (the member of lowest rank); when the leader has all of them it
 * sends the whole map to every follower. The members are the whole group or a subset named by the
 * caller; gathers over one set of members are numbered in the order each worker starts them, so
 * concurrent or repeated gathers line up across workers, and gathers over different sets never
 * wait for each other.
 *
 * <pre>
 *   follower ──gatherToLeader(id, members, name, value)──▶ leader   (once per follower)
 *   leader   ──broadcastToFollowers(id, map)─────────────▶ follower (when all have arrived)
 * </pre>
 */
final class AllGathers {
    /** One gather in progress on this worker. */
    private static final class State {
        final Map<String, Object> gathered = new HashMap<>();
        final CompletableFuture<Map<String, Object>> complete = new CompletableFuture<>();
    }

    private static final RpcFunction4<String, List<String>, String, Object, Boolean> GATHER = SystemCalls::gatherToLeader;
    private static final RpcFunction2<String, Map<String, Object>, Boolean> BROADCAST = SystemCalls::broadcastToFollowers;

    private final DefaultRpcAgent agent;
    /** Per set of members (its key), how many gathers over it this worker has started. */
    private final ConcurrentHashMap<String, AtomicLong> sequences = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, State> states = new ConcurrentHashMap<>();

    AllGathers(DefaultRpcAgent agent) {
        this.agent = agent;
    }

    /** Gathers over the whole group. */
    Map<String, Object> run(Object value, Duration timeout) {
        return run(value, null, timeout);
    }

    /** Gathers over the workers named, or the whole group when {@code workerNames} is null. */
    Map<String, Object> run(Object value, Collection<String> workerNames, Duration timeout) {
        WorkerDirectory directory = agent.directory();
        List<WorkerInfo> members = members(directory, workerNames);
        // The whole group's key is short: it rides on every gather message, shutdown's among them.
        String key = members.size() == directory.size() ? "*" : String.join(",", names(members));
        String id = key + "#" + sequences.computeIfAbsent(key, k -> new AtomicLong()).getAndIncrement();
        WorkerInfo self = directory.self();
        WorkerInfo leader = members.get(0);
        try {
            if (self.equals(leader)) {
                contribute(id, names(members), self.name(), value);
                Map<String, Object> all = await(state(id).complete, timeout, id, "values from every member");
                broadcast(id, all, members, timeout);
                return all;
            }
            agent.invokeSystem(leader, GATHER, new Object[] {id, names(members), self.name(), value}, timeout).await();
            return await(state(id).complete, timeout, id, "the gathered values from leader " + leader.name());
        } finally {
            states.remove(id);
        }
    }

    /** The members in rank order (the leader first), checked against the group. */
    private static List<WorkerInfo> members(WorkerDirectory directory, Collection<String> workerNames) {
        if (workerNames == null) {
            return directory.workers().stream().sorted(Comparator.comparingInt(WorkerInfo::id)).toList();
        }
        if (workerNames.isEmpty()) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, "a gather or barrier needs at least one worker");
        }
        List<WorkerInfo> members = new ArrayList<>();
        for (String name : new TreeSet<>(workerNames)) {
            members.add(directory.byName(name));
        }
        members.sort(Comparator.comparingInt(WorkerInfo::id));
        if (!members.contains(directory.self())) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT, directory.self().name()
                    + " cannot take part in a gather or barrier of " + names(members) + ": it is not among them");
        }
        return members;
    }

    private static List<String> names(List<WorkerInfo> members) {
        return members.stream().map(WorkerInfo::name).toList();
    }

    private void broadcast(String id, Map<String, Object> all, List<WorkerInfo> members, Duration timeout) {
        List<WorkerInfo> followers = members.subList(1, members.size());
        List<RpcFuture<Object>> replies = new ArrayList<>();
        for (WorkerInfo follower : followers) {
            replies.add(agent.invokeSystem(follower, BROADCAST, new Object[] {id, all}, timeout));
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

    void contribute(String id, List<String> members, String name, Object value) {
        if (!members.contains(name)) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, name + " is not expected by the leader of gather " + id);
        }
        State state = state(id);
        Map<String, Object> complete = null;
        synchronized (state) {
            if (state.gathered.containsKey(name)) {
                throw new RpcException(RpcException.Code.ILLEGAL_STATE, name + " reported gather " + id + " twice");
            }
            state.gathered.put(name, value);
            if (state.gathered.size() == members.size()) {
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
