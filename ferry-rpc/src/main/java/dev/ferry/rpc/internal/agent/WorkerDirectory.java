package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The members of the group as this worker knows them at one moment, with the address each listens
 * on and its incarnation, and the workers that were members and are gone (left, or replaced by a
 * new incarnation), so that a call to one fails saying so. Immutable: a membership change makes a
 * new directory ({@link #with}, {@link #without}), so lookups need no locking.
 */
final class WorkerDirectory {
    /**
     * One worker as registered at rendezvous. {@code incarnation} tells a restarted worker's new
     * process from its old one (the join slot it took; later ones are higher).
     */
    record Entry(WorkerInfo info, String address, long incarnation) {
    }

    private final WorkerInfo self;
    private final List<WorkerInfo> workers;
    private final Map<String, Entry> byName;
    private final Map<Integer, Entry> byId;
    /** Why each former member is gone, by name. */
    private final Map<String, String> gone;
    /**
     * The former members' names by id, so that a lookup by id (how distributed autograd and RRefs
     * address a peer) fails as one by name does; an id taken by a new member is no longer here.
     */
    private final Map<Integer, String> goneIds;

    WorkerDirectory(WorkerInfo self, List<Entry> entries) {
        this(self, index(entries), Map.of(), Map.of());
    }

    private WorkerDirectory(WorkerInfo self, Map<String, Entry> byName, Map<String, String> gone,
            Map<Integer, String> goneIds) {
        this.self = self;
        this.byName = Map.copyOf(byName);
        this.gone = Map.copyOf(gone);
        this.goneIds = Map.copyOf(goneIds);
        Map<Integer, Entry> ids = new HashMap<>();
        byName.values().forEach(entry -> ids.put(entry.info().id(), entry));
        this.byId = Map.copyOf(ids);
        this.workers = byName.values().stream().map(Entry::info).sorted(Comparator.comparingInt(WorkerInfo::id)).toList();
    }

    private static Map<String, Entry> index(List<Entry> entries) {
        Map<String, Entry> byName = new HashMap<>();
        entries.forEach(entry -> byName.put(entry.info().name(), entry));
        return byName;
    }

    /** This directory with {@code entry} added, or replacing the member of its name. */
    WorkerDirectory with(Entry entry) {
        Map<String, Entry> members = new HashMap<>(byName);
        members.put(entry.info().name(), entry);
        Map<String, String> former = new HashMap<>(gone);
        former.remove(entry.info().name());
        Map<Integer, String> formerIds = new HashMap<>(goneIds);
        formerIds.remove(entry.info().id());
        return new WorkerDirectory(self, members, former, formerIds);
    }

    /** This directory without the member {@code name}, which is gone for {@code why}. */
    WorkerDirectory without(String name, String why) {
        Map<String, Entry> members = new HashMap<>(byName);
        Entry leaving = members.remove(name);
        Map<String, String> former = new HashMap<>(gone);
        former.put(name, why);
        Map<Integer, String> formerIds = new HashMap<>(goneIds);
        if (leaving != null) {
            formerIds.put(leaving.info().id(), name);
        }
        return new WorkerDirectory(self, members, former, formerIds);
    }

    WorkerInfo self() {
        return self;
    }

    /** The members, by rank. */
    List<WorkerInfo> workers() {
        return workers;
    }

    int size() {
        return workers.size();
    }

    /** The member named {@code name}, or null. */
    Entry entry(String name) {
        return name == null ? null : byName.get(name);
    }

    WorkerInfo byName(String name) {
        Entry entry = entry(name);
        if (entry == null) {
            throw notAMember(name);
        }
        return entry.info();
    }

    WorkerInfo byId(int id) {
        Entry entry = byId.get(id);
        if (entry == null && goneIds.containsKey(id)) {
            throw notAMember(goneIds.get(id));
        }
        if (entry == null) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    describeSelf() + " could not find destination id " + id + " (ids are " + byId.keySet() + ")");
        }
        return entry.info();
    }

    /** The worker equal to {@code info}, which must be a member of this group. */
    WorkerInfo member(WorkerInfo info) {
        WorkerInfo known = byName(info.name());
        if (known.id() != info.id()) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    describeSelf() + ": " + info + " is not a member of this group (" + known + " is)");
        }
        return known;
    }

    String addressOf(String name) {
        Entry entry = byName.get(name);
        if (entry == null) {
            throw notAMember(name);
        }
        return entry.address();
    }

    /**
     * Why {@code name} is not a member: {@code UNAVAILABLE} for a former member (it left, or was
     * replaced), {@code INVALID_ARGUMENT} for a name never seen.
     */
    private RpcException notAMember(String name) {
        String why = name == null ? null : gone.get(name);
        if (why != null) {
            return new RpcException(RpcException.Code.UNAVAILABLE, "worker " + name + " " + why);
        }
        return new RpcException(RpcException.Code.INVALID_ARGUMENT,
                describeSelf() + " could not find destination name " + name + "; workers are " + names());
    }

    boolean containsName(String name) {
        return byName.containsKey(name);
    }

    boolean contains(String name, int id) {
        Entry entry = byName.get(name);
        return entry != null && entry.info().id() == id;
    }

    List<String> names() {
        return workers.stream().map(WorkerInfo::name).toList();
    }

    private String describeSelf() {
        return "name:" + self.name() + ",rank:" + self.id();
    }
}
