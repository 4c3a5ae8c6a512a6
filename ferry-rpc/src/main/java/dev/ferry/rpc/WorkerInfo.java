package dev.ferry.rpc;

import java.io.Serializable;
import java.util.Objects;

/**
 * A worker's identity in an RPC group: its unique name and its id (the rank it joined with).
 * Values are equal when name and id are equal, as in PyTorch.
 */
public record WorkerInfo(String name, int id) implements Serializable {
    public WorkerInfo {
        Objects.requireNonNull(name, "name");
    }

    // Written out: a record's generated equals and hashCode link method handles on first use,
    // which spins classes and feeds the JIT while the worker starts.
    @Override
    public boolean equals(Object other) {
        return other instanceof WorkerInfo that && id == that.id && name.equals(that.name);
    }

    @Override
    public int hashCode() {
        return 31 * name.hashCode() + id;
    }

    @Override
    public String toString() {
        return "WorkerInfo(id=" + id + ", name=" + name + ")";
    }
}
