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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The all-gather protocol (PyTorch's {@code _all_gather}): every member sends its value to the
 * leader (the member of lowest rank), whose answer, once it has them all, is the whole map. The
 * members are the group or a subset named by the caller; gathers over one set of members are
 * numbered in the order each worker starts them, so concurrent or repeated gathers line up across
 * workers, and gathers over different sets never wait for each other.
 *
 * <pre>
 *   follower ──gatherToLeader(id, members, name, value)──▶ leader
 *   follower ◀──────────── the whole map ───────────────── leader   (when all have arrived)
 * </pre>
 *
 * <p>A gather over the whole group is over the workers that are not lost ({@link PeerLiveness}):
 * the leader stops waiting for a member once it is lost, and a follower whose leader is lost (or
 * unreachable) sends its value to the next one, which keeps the answers of the gathers it led, so
 * graceful shutdown completes among the survivors. A gather over named workers fails with
 * {@link RpcException.Code#UNAVAILABLE} as soon as one of them is lost.
 *
 * <p>A member that begins shutdown without having started a gather the others wait in (its program
 * failed before the gather, say) will never take part, while it waits for them in shutdown's own
 * gather: that gather fails at once with {@link RpcException.Code#SHUTDOWN}, naming the member,
 * instead of at its timeout. A leader that waits for members asks each one, soon, to tell it when it
 * has started the gather or begun shutdown ({@link #watch}); a leader that begins shutdown itself
 * fails the gathers it leads and has not started. A member that started the gather before it
 * began shutdown is still waited for: its value is on its way.
 *
 * <p>Thread-safe.
 */
final class AllGathers {
    /** The key of gathers over the whole group: short, it rides on every one of them (shutdown's too). */
    private static final String GROUP = "*";
    /** The key of the group's first gather (at init), over all its workers by name. */
    private static final String FIRST = "init";
    /** The key of graceful shutdown's gathers. */
    private static final String SHUTDOWN = "shutdown";
    /** Answers of finished gathers kept for followers whose leader was lost before it answered them. */
    private static final int KEPT_ANSWERS = 32;
    /** How long a leader waits before it watches the members it still waits for (most come at once). */
    private static final long PROBE_DELAY_NANOS = 200_000_000;
    /**
     * Peers' watches of gathers not started here that this worker holds at most: a leader holds one
     * per member it waits for, so this bounds only what a misbehaving peer could pile up.
     */
    private static final int MAX_WATCHES = 4096;

    /** A gather's id: its set of members' key and its number among the gathers over that set. */
    private record GatherId(String key, long number) {
        static GatherId parse(String id) {
            int hash = id.lastIndexOf('#');
            return new GatherId(id.substring(0, hash), Long.parseLong(id.substring(hash + 1)));
        }

        /** Shutdown's gathers and the group's first are the agent's own, which no member skips. */
        boolean isTheAgents() {
            return key.equals(SHUTDOWN) || key.equals(FIRST);
        }

        @Override
        public String toString() {
            return key + "#" + number;
        }
    }

    /** A peer's question: has this worker started gather {@code number} over {@code key}? */
    private record Watch(String key, long number, CompletableFuture<Boolean> answer) {
    }

    /** One gather in progress on this worker. */
    private static final class State {
        final Map<String, Object> gathered = new HashMap<>(); // guarded by this
        final CompletableFuture<Map<String, Object>> complete = new CompletableFuture<>();
        /** The members named, or null for the group's live members. */
        volatile List<String> members;
    }

    private static final RpcFunction4<String, List<String>, String, Object, RpcFuture<Map<String, Object>>> GATHER =
            SystemCalls::gatherToLeader;
    private static final RpcFunction2<String, Long, RpcFuture<Boolean>> WATCH = SystemCalls::watchGather;

    private final DefaultRpcAgent agent;
    /** Per set of members (its key), how many gathers over it this worker has started; guarded by {@link #watches}. */
    private final Map<String, Long> sequences = new HashMap<>();
    /** Peers' watches of gathers this worker has not started yet; guarded by itself. */
    private final List<Watch> watches = new ArrayList<>();
    /**
     * Set, under {@link #watches}, when this worker begins shutdown: it starts no gather but
     * shutdown's after. Volatile for {@link #contribute}, which reads it outside the lock.
     */
    private volatile boolean leaving;
    /** The gathers this worker takes part in now, by id (its debug info). */
    private final Set<String> inProgress = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, State> states = new ConcurrentHashMap<>();
    /** The last gathers led here, by id, for late followers; guarded by itself. */
    private final Map<String, Map<String, Object>> answered = new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, Object>> eldest) {
            return size() > KEPT_ANSWERS;
        }
    };

    AllGathers(DefaultRpcAgent agent) {
        this.agent = agent;
    }

    /** Gathers over the whole group (its workers that are not lost). */
    Map<String, Object> run(Object value, Duration timeout) {
        return run(value, null, timeout);
    }

    /** Gathers over the workers named, or the whole group when {@code workerNames} is null. */
    Map<String, Object> run(Object value, Collection<String> workerNames, Duration timeout) {
        WorkerDirectory directory = agent.directory();
        List<WorkerInfo> named = workerNames == null ? null : named(directory, workerNames);
        boolean changes = agent.joinedRunningWorld();
        if (named == null && changes) {
            // Whole-group gathers line up by count since the group formed, which a worker that
            // joined later did not see: it would be answered another gather's values.
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, directory.self().name() + " joined a running world ("
                    + (agent.worldWithoutFixedSize() ? "without a fixed size" : "as a restarted incarnation")
                    + "): a gather over the whole group needs workers that formed it together; name the workers"
                    + " (allGather(value, workerNames, timeout), barrier(workerNames))");
        }
        boolean group = named == null || (named.size() == directory.size() && !changes);
        return gather(group ? GROUP : String.join(",", names(named)), group ? null : named, value, timeout);
    }

    /**
     * The group's first gather, at init: every worker rendezvous found takes part, and none is
     * skipped as lost. A worker that cannot be reached then (another auth token, a crash during
     * init) fails init everywhere: it was never a member that the others could run on without.
     */
    Map<String, Object> runFirst(Duration timeout) {
        return gather(FIRST, agent.directory().workers(), null, timeout);
    }

    /**
     * One of graceful shutdown's gathers over the whole group (its workers that are not lost).
     * They have a key of their own, so they line up also with workers that joined the group later
     * (whose count of the group's other gathers started later).
     */
    Map<String, Object> runShutdown(Object value, Duration timeout) {
        return gather(SHUTDOWN, null, value, timeout);
    }

    /** A gather over {@code named}, or (null) the group's live workers, numbered under {@code key}. */
    private Map<String, Object> gather(String key, List<WorkerInfo> named, Object value, Duration timeout) {
        WorkerDirectory directory = agent.directory();
        List<String> members = named == null ? List.of() : names(named);
        String id = start(key).toString();
        WorkerInfo self = directory.self();
        long deadline = timeout.isZero() ? 0 : System.nanoTime() + timeout.toNanos();
        inProgress.add(id);
        try {
            while (true) {
                WorkerInfo leader = members.isEmpty() ? firstLive(directory) : named.get(0);
                if (self.equals(leader)) {
                    contribute(id, members, self.name(), value);
                    probeLater(id, deadline, timeout);
                    return await(RpcFuture.fromCompletionStage(state(id).complete), deadline, timeout, id,
                            "values from every member");
                }
                RpcFuture<Object> answer = agent.invokeSystem(leader, GATHER, new Object[] {id, members, self.name(), value},
                        left(deadline, timeout, id));
                try {
                    return await(answer.thenApply(AllGathers::asMap), deadline, timeout, id,
                            "the gathered values from leader " + leader.name());
                } catch (RpcException e) {
                    if (!members.isEmpty() || e.code() != RpcException.Code.UNAVAILABLE) {
                        throw e;
                    }
                    // The leader is gone: the next live worker leads (it may have the answer already).
                    agent.unreachable(leader, e.getMessage());
                }
            }
        } finally {
            states.remove(id);
            inProgress.remove(id);
        }
    }

    /**
     * Numbers this worker's next gather over {@code key} and answers the peers that watched for it;
     * refused once this worker began shutdown, but for shutdown's own gathers.
     */
    private GatherId start(String key) {
        List<Watch> told = new ArrayList<>();
        GatherId id;
        synchronized (watches) {
            if (leaving && !key.equals(SHUTDOWN)) {
                throw new RpcException(RpcException.Code.SHUTDOWN, agent.directory().self().name()
                        + " is shutting down: it starts no more gathers or barriers");
            }
            long number = sequences.merge(key, 1L, Long::sum) - 1;
            id = new GatherId(key, number);
            for (var it = watches.iterator(); it.hasNext(); ) {
                Watch watch = it.next();
                if (watch.key.equals(key) && watch.number <= number) {
                    told.add(watch);
                    it.remove();
                }
            }
        }
        told.forEach(watch -> watch.answer.complete(true));
        return id;
    }

    /** Whether this worker has started gather {@code id}. */
    private boolean started(GatherId id) {
        synchronized (watches) {
            return sequences.getOrDefault(id.key, 0L) > id.number;
        }
    }

    /**
     * On a member, for the leader of gather {@code number} over {@code key}: true once this worker
     * has started it (its value is on its way), false if it began shutdown first (it never will).
     */
    RpcFuture<Boolean> watch(String key, long number) {
        GatherId id = new GatherId(key, number);
        synchronized (watches) {
            if (started(id)) {
                return RpcFuture.completed(Boolean.TRUE);
            }
            if (leaving) {
                return RpcFuture.completed(Boolean.FALSE);
            }
            if (watches.size() >= MAX_WATCHES) {
                throw new RpcException(RpcException.Code.ILLEGAL_STATE, agent.directory().self().name()
                        + " already holds " + MAX_WATCHES + " watches of gathers it has not started");
            }
            Watch watch = new Watch(key, number, new CompletableFuture<>());
            watches.add(watch);
            return RpcFuture.fromCompletionStage(watch.answer);
        }
    }

    /**
     * This worker begins shutdown: it will take part in no gather it has not started, so the peers
     * watching for one are told, and the gathers it leads and has not started fail.
     */
    void leaving() {
        List<Watch> told;
        synchronized (watches) {
            leaving = true;
            told = new ArrayList<>(watches);
            watches.clear();
        }
        told.forEach(watch -> watch.answer.complete(false));
        states.forEach(this::failIfNeverStartedHere);
    }

    /** On a leader that began shutdown: fails gather {@code id} if it will never take part in it. */
    private void failIfNeverStartedHere(String id, State state) {
        GatherId gather = GatherId.parse(id);
        if (!gather.isTheAgents() && !started(gather)) {
            state.complete.completeExceptionally(leftWithout(agent.directory().self().name(), id));
        }
    }

    private static RpcException leftWithout(String member, String id) {
        return new RpcException(RpcException.Code.SHUTDOWN, "allGather " + id + " cannot complete: its member "
                + member + " began shutdown without taking part (did its program fail or return before the gather?)");
    }

    /** The gathers this worker takes part in now, by id, in order (debug info). */
    String inProgress() {
        return String.join(" ", new TreeSet<>(inProgress));
    }

    /** The map in a leader's answer: an asynchronous function's value arrives as a completed future. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object answer) {
        return (Map<String, Object>) unwrap(answer);
    }

    /** The lowest-ranked worker of the group that is not lost (this one, at worst). */
    private WorkerInfo firstLive(WorkerDirectory directory) {
        for (WorkerInfo worker : directory.workers()) {
            if (worker.equals(directory.self()) || !agent.liveness().isLost(worker.name())) {
                return worker;
            }
        }
        return directory.self();
    }

    /** The members named, in rank order (the leader first), checked against the group. */
    private static List<WorkerInfo> named(WorkerDirectory directory, Collection<String> workerNames) {
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

    /**
     * On the leader: records {@code name}'s value for gather {@code id} over {@code members}
     * (empty: the group's live workers); the future is the whole map once every member's value is
     * in. A value for a gather this worker already answered gets that answer.
     */
    RpcFuture<Map<String, Object>> contribute(String id, List<String> members, String name, Object value) {
        Map<String, Object> done;
        synchronized (answered) {
            done = answered.get(id);
        }
        if (done != null) {
            return RpcFuture.completed(done);
        }
        if (!members.isEmpty() && !members.contains(name)) {
            throw new RpcException(RpcException.Code.ILLEGAL_STATE, name + " is not expected by the leader of gather " + id);
        }
        State state = state(id);
        state.members = members.isEmpty() ? null : members;
        if (leaving) { // after the state is in states: leaving() fails it, or this does
            failIfNeverStartedHere(id, state);
        }
        synchronized (state) {
            if (state.gathered.containsKey(name)) {
                throw new RpcException(RpcException.Code.ILLEGAL_STATE, name + " reported gather " + id + " twice");
            }
            state.gathered.put(name, value);
        }
        checkComplete(id, state);
        return RpcFuture.fromCompletionStage(state.complete);
    }

    /**
     * Soon, if gather {@code id} still waits for members, watches them: asks each to say when it has
     * started the gather or begun shutdown (then the gather fails: it never will take part), and
     * watches the liveness of those this worker has no connection to, so that it learns of their
     * loss (a member that never connected to the leader and died or hangs would otherwise be waited
     * for until the timeout).
     */
    private void probeLater(String id, long deadline, Duration timeout) {
        agent.schedule(() -> {
            State state = states.get(id);
            if (state == null || state.complete.isDone()) {
                return;
            }
            List<String> expected = state.members != null ? state.members : liveNames();
            List<WorkerInfo> missing = new ArrayList<>();
            synchronized (state) {
                for (String name : expected) {
                    if (!state.gathered.containsKey(name)) {
                        missing.add(agent.directory().byName(name));
                    }
                }
            }
            agent.liveness().probe(missing);
            GatherId gather = GatherId.parse(id);
            if (gather.isTheAgents() || (deadline != 0 && deadline - System.nanoTime() <= 0)) {
                return;
            }
            for (WorkerInfo member : missing) {
                agent.invokeSystem(member, WATCH, new Object[] {gather.key, gather.number}, left(deadline, timeout, id))
                        .addDoneCallback(answer -> {
                            // A failed watch (the member lost, the gather's time up) is the
                            // liveness watch's or the timeout's to report.
                            if (!answer.failed() && Boolean.FALSE.equals(unwrap(answer.value()))) {
                                state.complete.completeExceptionally(leftWithout(member.name(), id));
                            }
                        });
            }
        }, PROBE_DELAY_NANOS);
    }

    /** An answer as sent: an asynchronous function's value arrives as a completed future. */
    private static Object unwrap(Object answer) {
        return answer instanceof RpcFuture<?> future ? future.value() : answer;
    }

    /** A peer was lost: gathers led here stop waiting for it, or fail if they named it. */
    void peerLost(WorkerInfo peer) {
        states.forEach((id, state) -> {
            List<String> members = state.members;
            if (members != null && members.contains(peer.name())) {
                state.complete.completeExceptionally(new RpcException(RpcException.Code.UNAVAILABLE, "allGather " + id
                        + " cannot complete: its member " + peer.name() + " is lost" + authHint()));
            } else if (members == null) {
                checkComplete(id, state);
            }
        });
    }

    private void checkComplete(String id, State state) {
        Map<String, Object> complete = null;
        synchronized (state) {
            if (state.complete.isDone() || state.gathered.isEmpty()) {
                return; // nothing to answer yet: this worker has not joined in
            }
            List<String> expected = state.members != null ? state.members : liveNames();
            if (state.gathered.keySet().containsAll(expected)) {
                complete = Collections.unmodifiableMap(new HashMap<>(state.gathered));
            }
        }
        if (complete != null) {
            synchronized (answered) {
                answered.put(id, complete);
            }
            state.complete.complete(complete);
        }
    }

    private List<String> liveNames() {
        WorkerDirectory directory = agent.directory();
        List<String> live = new ArrayList<>();
        for (WorkerInfo worker : directory.workers()) {
            if (worker.equals(directory.self()) || !agent.liveness().isLost(worker.name())) {
                live.add(worker.name());
            }
        }
        return live;
    }

    /** Fails every gather in progress (on shutdown): it takes part in none after. */
    void failAll(RpcException error) {
        leaving();
        states.values().forEach(state -> state.complete.completeExceptionally(error));
    }

    private State state(String id) {
        return states.computeIfAbsent(id, key -> new State());
    }

    private Duration left(long deadline, Duration timeout, String id) {
        if (deadline == 0) {
            return Duration.ZERO;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw timedOut(timeout, id, "a live leader");
        }
        return Duration.ofNanos(left);
    }

    private Map<String, Object> await(RpcFuture<Map<String, Object>> future, long deadline, Duration timeout,
                                      String id, String what) {
        try {
            return deadline == 0 ? future.await() : future.await(left(deadline, timeout, id));
        } catch (RpcException e) {
            if (e.code() == RpcException.Code.TIMEOUT) {
                throw timedOut(timeout, id, what);
            }
            throw e;
        }
    }

    private RpcException timedOut(Duration timeout, String id, String what) {
        return new RpcException(RpcException.Code.TIMEOUT, agent.directory().self().name() + " timed out in allGather "
                + id + " after " + describe(timeout) + " waiting for " + what + authHint());
    }

    /** Why a gather may not have completed, when connections failed authentication here. */
    private String authHint() {
        long rejected = agent.authRejections();
        return rejected == 0 ? "" : " (" + rejected + " connection" + (rejected == 1 ? "" : "s")
                + " failed authentication meanwhile: do all workers have the same authToken?)";
    }

    private static String describe(Duration timeout) {
        return timeout.isZero() ? "no timeout" : String.format("%.2f seconds", timeout.toNanos() / 1e9);
    }
}
