package dev.ferry.rpc.store;

import java.util.Objects;
import java.util.Optional;

/**
 * What a {@link Rendezvous} produced: a connected store and this process's rank and world size
 * (resolved from arguments, URL query or environment). It owns everything the rendezvous created,
 * including the TCP store server on rank 0: {@link #close()} releases it all.
 *
 * <p>Closing rank 0's result stops the server that every other rank's store talks to, so rank 0
 * should close last (after a shutdown barrier), as in PyTorch.
 *
 * <p>This class is immutable; the store it holds is thread-safe.
 */
public final class RendezvousResult implements AutoCloseable {
    private final Store store;
    private final int rank;
    private final int worldSize;
    private final String initMethod;

    RendezvousResult(Store store, int rank, int worldSize, String initMethod) {
        this.store = Objects.requireNonNull(store, "store");
        this.rank = rank;
        this.worldSize = worldSize;
        this.initMethod = initMethod;
    }

    /** The connected store. Closing it is the same as closing this result. */
    public Store store() {
        return store;
    }

    /** This process's rank, in {@code [0, worldSize)}. */
    public int rank() {
        return rank;
    }

    /** The number of processes in the job. */
    public int worldSize() {
        return worldSize;
    }

    /** The init method URL this came from. */
    public String initMethod() {
        return initMethod;
    }

    /** The TCP store server this process hosts (rank 0 of a tcp:// or env:// rendezvous). */
    public Optional<TcpStoreServer> server() {
        return store instanceof TcpStore tcp ? tcp.server() : Optional.empty();
    }

    /** Closes the store, and the server if this process hosts it. Idempotent. */
    @Override
    public void close() {
        store.close();
    }

    @Override
    public String toString() {
        return "RendezvousResult[" + initMethod + ", rank " + rank + " of " + worldSize + ", " + store + "]";
    }
}
