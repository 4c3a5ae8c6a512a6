package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.WorkerInfo;

import java.util.concurrent.CompletableFuture;

/**
 * A user's side of an RRef (one fork), kept apart from the {@code RRef} object so the garbage
 * collector can release an unreachable RRef (its Cleaner action holds only this state).
 *
 * <p>The delete message goes to the owner exactly once, when the RRef is released (closed,
 * collected or at shutdown) AND the owner has confirmed this fork AND every fork this user handed
 * on has been accepted by its receiver (PyTorch's guarantees G1 and G2). Guarded by the context.
 */
public final class UserState {
    final GloballyUniqueId rrefId;
    final GloballyUniqueId forkId;
    final WorkerInfo owner;
    final CompletableFuture<Void> confirmation = new CompletableFuture<>();
    boolean confirmed;
    boolean released;
    boolean deleteSent;
    /** The creation call failed before it was sent: the owner never knew this RRef. */
    boolean neverSent;
    int pendingChildren;
    /**
     * This user's {@code toHere()} fetches on their way: its delete waits for them, since one sent
     * first would reach the owner before a fetch, which would then wait there for a value that is
     * never made (the owner keeps a place for a fetch that overtook the creation).
     */
    int fetchesInFlight;
    volatile RpcException creationError;
    /** Why its owner is gone (left, lost, replaced); null while it is a member. */
    volatile RpcException ownerGone;

    UserState(GloballyUniqueId rrefId, GloballyUniqueId forkId, WorkerInfo owner) {
        this.rrefId = rrefId;
        this.forkId = forkId;
        this.owner = owner;
    }

    public GloballyUniqueId rrefId() {
        return rrefId;
    }

    public GloballyUniqueId forkId() {
        return forkId;
    }

    public WorkerInfo owner() {
        return owner;
    }

    public RpcException creationError() {
        return creationError;
    }

    public CompletableFuture<Void> confirmation() {
        return confirmation;
    }

    boolean readyToDelete() {
        return released && confirmed && pendingChildren == 0 && fetchesInFlight == 0 && !deleteSent;
    }
}
