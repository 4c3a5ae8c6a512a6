package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.WorkerInfo;

/**
 * Learns that a peer is gone while this worker runs: a connection to it closed outside a graceful
 * shutdown of the group, because the peer crashed or was killed, shut down without waiting for the
 * others, or the network between the two broke (or heartbeats found it silent, which closes its
 * connections); or it left the group, or restarted. (A graceful shutdown closes connections only once
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

    /**
     * {@code peer}'s connection to {@code agent}'s worker closed while {@code agent} was running,
     * or a new incarnation of {@code peer} (a restarted process under the same name and id)
     * replaced it: what was kept for the old one goes (this runs before anything of the new one).
     */
    void onPeerLost(RpcAgent agent, WorkerInfo peer);

    /**
     * {@code peer} left the group on its own (a graceful departure from a world without a fixed
     * size) while the others run on: what is kept on its behalf is no longer needed either. By
     * default the same as {@link #onPeerLost}.
     */
    default void onPeerLeft(RpcAgent agent, WorkerInfo peer) {
        onPeerLost(agent, peer);
    }
}
