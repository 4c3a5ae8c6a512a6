package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;

import java.util.HashSet;
import java.util.Set;

/**
 * The owner's side of an RRef: the value (or the error the function that made it threw) and the
 * forks (users) the owner knows of. Guarded by its {@link RRefContext}'s lock, except the value.
 */
public final class OwnerState {
    final GloballyUniqueId id;
    final RpcFuture<Object> value = new RpcFuture<>();
    final Set<GloballyUniqueId> forks = new HashSet<>();
    /** True once the creation (a remote call, or a local value) is known here. */
    boolean created;

    OwnerState(GloballyUniqueId id) {
        this.id = id;
    }

    public GloballyUniqueId id() {
        return id;
    }

    /** Stores the value; later calls are ignored (the first outcome wins). */
    public void setValue(Object result) {
        FutureCompleter.tryComplete(value, result);
    }

    public void setError(Throwable error) {
        FutureCompleter.tryFail(value, error);
    }

    public RpcFuture<Object> value() {
        return value;
    }
}
