package dev.ferry.rpc;

/**
 * Identifies an RRef or one of its forks across the group: the id of the worker that created it
 * and a number unique on that worker (PyTorch's {@code GloballyUniqueId}).
 */
public record GloballyUniqueId(int createdOn, long localId) {
    @Override
    public String toString() {
        return "GloballyUniqueId(created_on=" + createdOn + ", local_id=" + localId + ")";
    }
}
