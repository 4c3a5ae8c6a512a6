package dev.ferry.rpc;

/**
 * Identifies an RRef or one of its forks across the group: the id of the worker that created it
 * and a number unique on that worker (PyTorch's {@code GloballyUniqueId}).
 */
public record GloballyUniqueId(int createdOn, long localId) {
    // Written out: a record's generated equals and hashCode link method handles on first use
    // (spinning classes for the JIT while a worker starts), and RRef tables hash these ids.
    @Override
    public boolean equals(Object other) {
        return other instanceof GloballyUniqueId that && createdOn == that.createdOn && localId == that.localId;
    }

    @Override
    public int hashCode() {
        return 31 * createdOn + Long.hashCode(localId);
    }

    @Override
    public String toString() {
        return "GloballyUniqueId(created_on=" + createdOn + ", local_id=" + localId + ")";
    }
}
