package dev.ferry.distributed.internal;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.PeerListener;

/**
 * Releases the distributed autograd contexts a lost worker created: only their creator closes
 * contexts, so once it is gone they would stay on every worker they reached for the rest of the
 * job (with the graphs and gradients they hold). Each worker that learns of the loss releases them
 * here and passes the release on to the workers the context reached, as a close would (a worker
 * that never talked to the creator itself learns of it that way). The releases still waiting to
 * be delivered to the lost worker are dropped: it holds nothing any more.
 *
 * <p>Installed on every agent by {@link java.util.ServiceLoader} with {@code ferry-distributed}.
 */
public final class LostCreatorRelease implements PeerListener {

    /** Public for {@link java.util.ServiceLoader}. */
    public LostCreatorRelease() {
    }

    @Override
    public void onPeerLost(RpcAgent agent, WorkerInfo peer) {
        ContextContainer.of(agent).peerGone(peer.id());
    }
}
