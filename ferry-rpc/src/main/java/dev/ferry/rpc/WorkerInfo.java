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

    @Override
    public String toString() {
        return "WorkerInfo(id=" + id + ", name=" + name + ")";
    }
}
