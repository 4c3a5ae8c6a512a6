package dev.ferry.distributed.internal;

import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.DeliveryQueues;
import dev.ferry.rpc.spi.RetriedSends;

import java.util.ArrayList;
import java.util.List;

/**
 * Sends the releases of distributed autograd contexts to the workers they reached, until each is
 * answered: {@link DeliveryQueues}, one queue per worker, one entry per context (a context released
 * twice is sent once), up to {@value #BATCH} releases a message, sent again 50 ms after a failure
 * ({@code UNAVAILABLE}, or a {@code TIMEOUT}: a release may arrive twice), doubling up to every
 * {@link RetriedSends#MAX_INTERVAL}, for as long as the worker is a member of the group and this
 * agent is not closed (a graceful shutdown still delivers them): a release given up would leave the
 * context's graph and gradients on that worker for as long as the creator lives. The worker's loss or
 * departure drops its queue ({@link #forget}): it holds nothing of ours any more.
 *
 * <p>The queues hold one entry per context and worker it reached, never more than that worker
 * holds itself for the same contexts. This class is thread-safe; sends run on the scheduler's
 * threads, never under a lock.
 */
final class ReleaseSender {
    /** The most releases one message carries (24 bytes each). */
    static final int BATCH = 1_024;

    /** A release of {@code context}, whose creator had closed every context it made before count {@code closedBelow}. */
    record Release(ContextKey context, long closedBelow) {
    }

    /** The workers releases go to. */
    interface Peers {
        /** Whether {@code worker} is a member not known lost and this agent is not closed (shutting down, it sends). */
        boolean reachable(int worker);

        String name(int worker);

        /** Sends {@code worker} one message carrying {@code releases}; its answer says they arrived. */
        RpcFuture<?> send(int worker, List<Release> releases);
    }

    private final DeliveryQueues<Integer, ContextKey, Release> queues;

    ReleaseSender(Peers peers, RetriedSends.Scheduler scheduler) {
        this.queues = new DeliveryQueues<>(new Workers(peers), Release::context, BATCH, scheduler);
    }

    /** Sends {@code release} to {@code worker}: now, or with the next message to it. */
    void send(int worker, Release release) {
        queues.send(worker, release);
    }

    /** Drops what waits for {@code worker}: it is lost or gone (a message on its way is answered in vain). */
    void forget(int worker) {
        queues.forget(worker);
    }

    /** How many releases wait for an answer, over all workers. */
    int waiting() {
        return queues.waiting();
    }

    /** The workers as the queues' targets. */
    private record Workers(Peers peers) implements DeliveryQueues.Targets<Integer, Release> {
        @Override
        public boolean reachable(Integer worker) {
            return peers.reachable(worker);
        }

        @Override
        public String describe(Integer worker, List<Release> batch) {
            List<Long> ids = new ArrayList<>();
            for (Release release : batch.subList(0, Math.min(batch.size(), 8))) {
                ids.add(release.context().id());
            }
            return "release of autograd context" + (batch.size() == 1 ? " " + ids.getFirst()
                    : "s " + ids + (batch.size() > ids.size() ? " and " + (batch.size() - ids.size()) + " more" : ""))
                    + " on " + peers.name(worker);
        }

        @Override
        public RpcFuture<?> send(Integer worker, List<Release> releases) {
            return peers.send(worker, releases);
        }
    }
}
