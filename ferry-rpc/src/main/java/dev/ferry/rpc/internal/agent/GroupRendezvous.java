package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.text.Durations;
import dev.ferry.rpc.store.Store;
import dev.ferry.rpc.store.StoreTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Learns the group through the rendezvous store. Every worker takes a join slot with an atomic
 * counter and writes "rank, incarnation, name, address" under it (the slot is its incarnation:
 * later joins take higher ones). A group of fixed size forms once {@code worldSize} slots are
 * written: every worker reads them all and validates the same list the same way, so a duplicate
 * name or rank fails every worker with the same message instead of leaving some waiting.
 *
 * <pre>
 *   kind = compareSet("world", "", "static N" | "dynamic")   // the first worker decides
 *   slot = add("join", 1) - 1
 *   set("worker/" + slot, "rank|slot|name|address")         // ephemeral where the store has sessions
 *   static, slot &lt; N: waitFor("worker/0" .. "worker/" + (N-1)), validate, set("formed")
 *   otherwise (a late joiner): read every other slot; the latest incarnation of each name is a
 *                              candidate member, to be greeted (the agent drops the unreachable)
 * </pre>
 *
 * A late joiner is a worker started without a world size (it joins a running world, or starts a
 * dynamic one), or one started with the world's size after that world formed: a restarted worker,
 * which comes back under its name as a new incarnation. Joiners of a static world wait until it
 * has formed. A registration is deleted when its worker leaves ({@link #leave}); a crashed
 * worker's stays behind on a store without sessions, and joiners find it unreachable.
 */
final class GroupRendezvous {
    private static final Logger log = LoggerFactory.getLogger(GroupRendezvous.class);
    private static final String WORLD_KIND = "world";
    private static final String DYNAMIC = "dynamic";
    private static final String STATIC = "static ";
    private static final String FORMED = "formed";
    private static final String JOIN_COUNTER = "join";
    private static final String SLOT_PREFIX = "worker/";

    /** What joining found: the members (candidates, for a late joiner), and this worker's incarnation. */
    record Joined(WorkerDirectory directory, long incarnation, boolean late) {
    }

    private GroupRendezvous() {
    }

    /**
     * Joins: a group of {@code worldSize} workers, or (0) whatever world runs there.
     *
     * @throws RpcException RENDEZVOUS_FAILED when the group does not form, mixes static and dynamic
     *                      members, or already has this worker's rank under another name
     */
    static Joined join(Store store, WorkerInfo self, String address, int worldSize, Duration timeout) {
        return join(store, self, address, worldSize, timeout, Notices.DEFAULT);
    }

    /**
     * When a worker waiting for the others of a static world says whom it waits for: after
     * {@code first}, then every {@code every}. Else initRpc is silent until its timeout (a minute
     * by default, or for ever), which looks like a hang when a rank was never started.
     */
    record Notices(Duration first, Duration every, Consumer<String> say) {
        static final Notices DEFAULT = new Notices(Duration.ofSeconds(10), Duration.ofSeconds(30), log::info);
    }

    static Joined join(Store store, WorkerInfo self, String address, int worldSize, Duration timeout, Notices notices) {
        String wanted = worldSize > 0 ? STATIC + worldSize : DYNAMIC;
        String kind = new String(store.compareSet(WORLD_KIND, new byte[0], wanted.getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8);
        if (worldSize > 0 && !kind.equals(wanted)) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "worker " + self.name() + " cannot join as rank "
                    + self.id() + " of a world of " + worldSize + ": the store holds a world " + describe(kind)
                    + " (a world mixes statically and dynamically initialized members only as later joiners)");
        }
        if (worldSize == 0 && kind.startsWith(STATIC)) {
            awaitFormed(store, self, kind, timeout); // join it once it runs
        }
        long slot = store.add(JOIN_COUNTER, 1) - 1;
        register(store, SLOT_PREFIX + slot, self, slot, address);
        if (worldSize > 0 && slot < worldSize) {
            return new Joined(formStatic(store, self, worldSize, timeout, notices), slot, false);
        }
        LateJoin found = worldSize > 0 && !store.check(List.of(FORMED)) ? null : readLateJoin(store, self, slot, address);
        if (found == null || (worldSize > 0 && !found.returning())) {
            // A static world takes later joiners only as new incarnations of its members (restarts).
            store.deleteKey(SLOT_PREFIX + slot);
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "worker " + self.name() + " (rank " + self.id()
                    + ") cannot join: the group of world size " + worldSize + " is already complete");
        }
        return new Joined(found.directory(), slot, true);
    }

    /** The candidate members a late joiner found, and whether an earlier incarnation of it was among them. */
    private record LateJoin(WorkerDirectory directory, boolean returning) {
    }

    /** Deletes the registration of incarnation {@code slot}: the worker left. */
    static void leave(Store store, long slot) {
        store.deleteKey(SLOT_PREFIX + slot);
    }

    private static void register(Store store, String key, WorkerInfo self, long slot, String address) {
        // On a store with sessions (etcd, ZooKeeper) the registration dies with this worker, so a
        // worker lost before the group formed is reported missing instead of counted in.
        if (store.hasSessions()) {
            store.setEphemeral(key, encode(self, slot, address));
        } else {
            store.set(key, encode(self, slot, address));
        }
    }

    private static void awaitFormed(Store store, WorkerInfo self, String kind, Duration timeout) {
        try {
            store.waitFor(List.of(FORMED), timeout);
        } catch (StoreTimeoutException e) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "worker " + self.name() + " waited "
                    + Durations.describe(timeout)
                    + " to join a world " + describe(kind) + ", which did not form", e);
        }
    }

    private static WorkerDirectory formStatic(Store store, WorkerInfo self, int worldSize, Duration timeout,
                                              Notices notices) {
        List<String> keys = new ArrayList<>(worldSize);
        for (int i = 0; i < worldSize; i++) {
            keys.add(SLOT_PREFIX + i);
        }
        long start = System.nanoTime();
        Duration slice = notices.first();
        while (true) {
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            Duration left = timeout.isZero() ? slice : timeout.minus(waited);
            try {
                store.waitFor(keys, left.compareTo(slice) < 0 ? left : slice);
                break;
            } catch (StoreTimeoutException e) {
                waited = Duration.ofNanos(System.nanoTime() - start);
                if (!timeout.isZero() && waited.compareTo(timeout) >= 0) {
                    throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "rendezvous of " + worldSize
                            + " workers did not complete within " + Durations.describe(timeout) + ": ranks "
                            + missingRanks(store, keys, worldSize)
                            // ephemeral registrations also vanish when a worker gives up and leaves first
                            + (store.hasSessions() ? " never arrived or left" : " never arrived")
                            + " (worker " + self.name() + " is rank " + self.id() + ")", e);
                }
                TreeSet<Integer> missing = missingRanks(store, keys, worldSize);
                notices.say().accept(self.name() + ": waiting for rank" + (missing.size() == 1 ? " " : "s ") + missing
                        + " of a world of " + worldSize + " to join (" + Durations.describe(waited.toSeconds() > 0
                        ? Duration.ofSeconds(waited.toSeconds()) : Duration.ofMillis(waited.toMillis())) + " of " + (timeout.isZero() ? "no limit" : Durations.describe(timeout)) + ")");
                slice = notices.every();
            }
        }
        List<WorkerDirectory.Entry> entries = new ArrayList<>(worldSize);
        for (String key : keys) {
            entries.add(decode(store.get(key, timeout), key));
        }
        validate(entries, worldSize);
        store.set(FORMED, new byte[] {1});
        return new WorkerDirectory(self, entries);
    }

    /**
     * The latest incarnation of every other name registered so far: every joiner writes its own
     * registration before it reads the others', so of two joiners the later writer always sees the
     * earlier one (and greets it).
     */
    private static LateJoin readLateJoin(Store store, WorkerInfo self, long own, String address) {
        long slots = store.add(JOIN_COUNTER, 0);
        Map<String, WorkerDirectory.Entry> latest = new HashMap<>();
        latest.put(self.name(), new WorkerDirectory.Entry(self, address, own));
        boolean returning = false;
        for (long slot = 0; slot < slots; slot++) {
            String key = SLOT_PREFIX + slot;
            if (slot == own || !store.check(List.of(key))) {
                continue; // its worker left, or its session ended, or it is still being written
            }
            WorkerDirectory.Entry entry;
            try {
                entry = decode(store.get(key, Duration.ofSeconds(1)), key);
            } catch (StoreTimeoutException left) {
                continue; // deleted between the check and the read
            }
            if (entry.info().name().equals(self.name())) {
                if (entry.incarnation() > own) {
                    throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "worker " + self.name()
                            + " joined again (incarnation " + entry.incarnation() + ") while this one (incarnation "
                            + own + ") was joining");
                }
                returning = true; // an earlier incarnation of this worker
                continue;
            }
            latest.merge(entry.info().name(), entry, (a, b) -> a.incarnation() > b.incarnation() ? a : b);
        }
        return new LateJoin(new WorkerDirectory(self, new ArrayList<>(latest.values())), returning);
    }

    private static void validate(List<WorkerDirectory.Entry> entries, int worldSize) {
        TreeMap<String, Integer> names = new TreeMap<>();
        TreeMap<Integer, String> ranks = new TreeMap<>();
        for (WorkerDirectory.Entry entry : entries) {
            WorkerInfo info = entry.info();
            Integer otherRank = names.putIfAbsent(info.name(), info.id());
            if (otherRank != null) {
                int low = Math.min(otherRank, info.id());
                int high = Math.max(otherRank, info.id());
                throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "RPC worker name " + info.name()
                        + " is not unique. Workers " + low + " and " + high + " share the same name.");
            }
            String otherName = ranks.putIfAbsent(info.id(), info.name());
            if (otherName != null) {
                throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "rank " + info.id()
                        + " is not unique: workers " + otherName + " and " + info.name() + " both joined as rank "
                        + info.id() + " (world size " + worldSize + ")");
            }
        }
    }

    private static TreeSet<Integer> missingRanks(Store store, List<String> keys, int worldSize) {
        TreeSet<Integer> missing = new TreeSet<>();
        for (int rank = 0; rank < worldSize; rank++) {
            missing.add(rank);
        }
        for (String key : keys) {
            if (store.check(List.of(key))) {
                try {
                    missing.remove(decode(store.get(key, Duration.ofSeconds(1)), key).info().id());
                } catch (StoreTimeoutException left) {
                    // an ephemeral registration whose worker left between the check and the read
                }
            }
        }
        return missing;
    }

    private static String describe(String kind) {
        return kind.startsWith(STATIC) ? "of fixed size " + kind.substring(STATIC.length()) : "without a fixed size";
    }

    private static byte[] encode(WorkerInfo self, long slot, String address) {
        return (self.id() + "|" + slot + "|" + self.name() + "|" + address).getBytes(StandardCharsets.UTF_8);
    }

    private static WorkerDirectory.Entry decode(byte[] bytes, String key) {
        String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\\|", 4);
        if (parts.length != 4) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "malformed registration under " + key);
        }
        try {
            return new WorkerDirectory.Entry(new WorkerInfo(parts[2], Integer.parseInt(parts[0])), parts[3],
                    Long.parseLong(parts[1]));
        } catch (NumberFormatException e) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "malformed registration under " + key, e);
        }
    }
}
