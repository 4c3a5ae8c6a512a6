package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.store.Store;
import dev.ferry.rpc.store.StoreTimeoutException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Learns the whole group through the rendezvous store. Every worker takes a join slot with an
 * atomic counter and writes "rank, name, address" under it; once {@code worldSize} slots are
 * written every worker reads them all and validates the same list the same way, so a duplicate
 * name or rank fails every worker with the same message instead of leaving some waiting.
 *
 * <pre>
 *   worker:  slot = add("join", 1) - 1        // 0 .. worldSize-1; beyond that: group is full
 *            set("worker/" + slot, "rank|name|address")   // ephemeral where the store has sessions
 *            waitFor("worker/0" .. "worker/" + (worldSize-1))
 *            read them all, check ranks and names are unique
 * </pre>
 */
final class GroupRendezvous {
    private static final String JOIN_COUNTER = "join";
    private static final String SLOT_PREFIX = "worker/";

    private GroupRendezvous() {
    }

    static WorkerDirectory join(Store store, WorkerInfo self, String address, int worldSize, Duration timeout) {
        long slot = store.add(JOIN_COUNTER, 1) - 1;
        if (slot >= worldSize) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "worker " + self.name() + " (rank " + self.id()
                    + ") cannot join: the group of world size " + worldSize + " is already complete");
        }
        // On a store with sessions (etcd, ZooKeeper) the registration dies with this worker, so a
        // worker lost before the group formed is reported missing instead of counted in.
        if (store.hasSessions()) {
            store.setEphemeral(SLOT_PREFIX + slot, encode(self, address));
        } else {
            store.set(SLOT_PREFIX + slot, encode(self, address));
        }
        List<String> keys = new ArrayList<>(worldSize);
        for (int i = 0; i < worldSize; i++) {
            keys.add(SLOT_PREFIX + i);
        }
        try {
            store.waitFor(keys, timeout);
        } catch (StoreTimeoutException e) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "rendezvous of " + worldSize
                    + " workers did not complete within " + timeout + ": ranks " + missingRanks(store, keys, worldSize)
                    // ephemeral registrations also vanish when a worker gives up and leaves first
                    + (store.hasSessions() ? " never arrived or left" : " never arrived")
                    + " (worker " + self.name() + " is rank " + self.id() + ")", e);
        }
        List<WorkerDirectory.Entry> entries = new ArrayList<>(worldSize);
        for (String key : keys) {
            entries.add(decode(store.get(key, timeout), key));
        }
        validate(entries, worldSize);
        return new WorkerDirectory(self, entries);
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

    private static byte[] encode(WorkerInfo self, String address) {
        return (self.id() + "|" + self.name() + "|" + address).getBytes(StandardCharsets.UTF_8);
    }

    private static WorkerDirectory.Entry decode(byte[] bytes, String key) {
        String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\\|", 3);
        if (parts.length != 3) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "malformed registration under " + key);
        }
        try {
            return new WorkerDirectory.Entry(new WorkerInfo(parts[1], Integer.parseInt(parts[0])), parts[2]);
        } catch (NumberFormatException e) {
            throw new RpcException(RpcException.Code.RENDEZVOUS_FAILED, "malformed registration under " + key, e);
        }
    }
}
