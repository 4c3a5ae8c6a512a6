package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;

/**
 * What travels for an RRef inside a message: its owner, its id, the id of the new fork this
 * message creates, and the worker that sent it (the fork's parent).
 */
public record ForkData(int ownerId, GloballyUniqueId rrefId, GloballyUniqueId forkId, int parentId) {
}
