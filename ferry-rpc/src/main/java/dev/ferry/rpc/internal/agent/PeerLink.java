package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.transport.PeerChannel;

/**
 * What the agent attaches to a channel once it knows the peer at the other end: who it is, and
 * the calls in flight with it ({@link CallBalance}), from which each message's
 * {@link dev.ferry.rpc.internal.wire.Delivery#alone} follows.
 *
 * <p>Thread-safe.
 */
final class PeerLink {
    final WorkerInfo worker;
    final CallBalance calls = new CallBalance();

    PeerLink(WorkerInfo worker) {
        this.worker = worker;
    }

    /** The link attached to {@code channel}, or null before its peer is known. */
    static PeerLink of(PeerChannel channel) {
        return channel.attachment() instanceof PeerLink link ? link : null;
    }
}
