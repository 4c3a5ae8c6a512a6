package dev.ferry.distributed.internal;

/**
 * Which distributed autograd context a message or a release is of: its id, and the incarnation of
 * the worker that created it (a restarted worker's ids start over, so the id alone may name a
 * context of its earlier incarnation).
 *
 * @param id                 {@code (creator << 48) + n}
 * @param creatorIncarnation the creator's {@link dev.ferry.rpc.RpcAgent#getIncarnation()}
 */
record ContextKey(long id, long creatorIncarnation) {

    /** The worker that created the context (its id is in the top 16 bits). */
    int creator() {
        return ContextContainer.creatorOf(id);
    }
}
