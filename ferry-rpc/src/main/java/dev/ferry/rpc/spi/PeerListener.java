package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.WorkerInfo;

/**
 * Learns that a peer is gone while this worker runs: a connection to it closed outside a graceful
 * shutdown of the group, because the peer crashed or was killed, shut down without waiting for the
 * others, or the network between the two broke. (A graceful shutdown closes connections only once
 * every worker has entered it, so it is never reported.) Libraries built on Ferry use this to drop
 * what they keep on a peer's behalf: distributed autograd releases the contexts the lost peer
 * created, which nobody could close any more.
 *
 * <pre>{@code
 * public final class SessionCleanup implements PeerListener {
 *     public void onPeerLost(RpcAgent agent, WorkerInfo peer) {
 *         Sessions.of(agent).dropOwnedBy(peer.id());
 *     }
 * }
 * // META-INF/services/dev.ferry.rpc.spi.PeerListener lists the class
 * }</pre>
 *
 * <p>Found by {@link java.util.ServiceLoader}. Called on the agent's timer thread, never on a
 * transport thread: keep it short and never wait there for a call's answer (start calls with
 * {@code rpcAsync} if you must). It may be called more than once for one loss (once per connection
 * to the peer that closed), so make it idempotent. An exception it throws is logged and ignored.
 */
public interface PeerListener {

    /** {@code peer}'s connection to {@code agent}'s worker closed while {@code agent} was running. */
    void onPeerLost(RpcAgent agent, WorkerInfo peer);
}
