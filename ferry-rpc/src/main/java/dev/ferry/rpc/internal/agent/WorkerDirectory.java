package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every worker of a static group, with the address it listens on. Immutable once rendezvous is
 * complete, so lookups need no locking.
 */
final class WorkerDirectory {
    /** One worker as registered at rendezvous. */
    record Entry(WorkerInfo info, String address) {
    }

    private final WorkerInfo self;
    private final List<WorkerInfo> workers;
    private final Map<String, Entry> byName = new HashMap<>();
    private final Entry[] byId;

    WorkerDirectory(WorkerInfo self, List<Entry> entries) {
        this.self = self;
        this.byId = new Entry[entries.size()];
        for (Entry entry : entries) {
            byName.put(entry.info().name(), entry);
            byId[entry.info().id()] = entry;
        }
        this.workers = entries.stream().map(Entry::info).sorted(Comparator.comparingInt(WorkerInfo::id)).toList();
    }

    WorkerInfo self() {
        return self;
    }

    List<WorkerInfo> workers() {
        return workers;
    }

    int size() {
        return workers.size();
    }

    WorkerInfo byName(String name) {
        Entry entry = name == null ? null : byName.get(name);
        if (entry == null) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    describeSelf() + " could not find destination name " + name + "; workers are " + names());
        }
        return entry.info();
    }

    WorkerInfo byId(int id) {
        if (id < 0 || id >= byId.length) {
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    describeSelf() + " could not find destination id " + id + " (ids are 0 to " + (byId.length - 1) + ")");
        }
        return byId[id].info();
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
            throw new RpcException(RpcException.Code.INVALID_ARGUMENT,
                    describeSelf() + " could not find destination url for name " + name);
        }
        return entry.address();
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
