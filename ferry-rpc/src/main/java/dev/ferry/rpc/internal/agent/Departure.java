package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction2;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.text.Durations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The graceful shutdown of a worker in a world without a fixed size: it leaves, and the others
 * run on (PyTorch's dynamic groups do this only ungracefully, and never for rank 0). No worker is
 * special: the one whose process holds the built-in TCP store may leave too, though no worker can
 * join after that (with etcd or ZooKeeper nothing holds the store).
 *
 * <pre>
 *   1. memberLeft(name, incarnation) to every member: from then on their calls to it fail at once
 *      ("worker X left the group"), its RRefs raise, what they kept for it is released
 *   2. wait here until the calls in flight both ways have ended (no member sends new ones)
 *   3. delete its registration from the store, so that joiners do not greet it
 * </pre>
 *
 * Then the agent closes as after any graceful shutdown. {@code timeout} bounds the whole.
 */
final class Departure {
    private static final Logger log = LoggerFactory.getLogger(Departure.class);
    private static final RpcFunction2<String, Long, Boolean> LEFT = SystemCalls::memberLeft;

    private final DefaultRpcAgent agent;
    private final PendingCalls pending;
    private final IncomingCalls incoming;
    private final Duration timeout;
    private final long start = System.nanoTime();

    Departure(DefaultRpcAgent agent, PendingCalls pending, IncomingCalls incoming, Duration timeout) {
        this.agent = agent;
        this.pending = pending;
        this.incoming = incoming;
        this.timeout = timeout;
    }

    void run() {
        WorkerInfo self = agent.getWorkerInfo();
        List<RpcFuture<Object>> told = new ArrayList<>();
        for (WorkerInfo member : agent.directory().workers()) {
            if (!member.equals(self) && !agent.liveness().isLost(member.name())) {
                told.add(agent.invokeInline(member, LEFT, new Object[] {self.name(), agent.getIncarnation()}, callBound()));
            }
        }
        for (RpcFuture<Object> answer : told) {
            try {
                answer.await();
            } catch (RpcException e) {
                log.debug("{}: a member did not hear of its departure: {}", self.name(), e.getMessage());
            }
        }
        agent.rrefs().releaseAllUsers();
        agent.userDeletes().flushAll();
        try {
            if (!pending.awaitNoApplicationCalls(remaining()) || !incoming.awaitIdle(remaining())
                    || !agent.rrefs().awaitQuiet(remaining())) {
                throw timedOut();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException(RpcException.Code.INTERNAL, "interrupted while leaving the group", e);
        }
        try {
            GroupRendezvous.leave(agent.store(), agent.getIncarnation());
        } catch (RuntimeException e) {
            // The store's holder left before (the built-in TCP store lives in its process): no one
            // can join any more, so no one will greet this worker's registration either.
            log.debug("{}: its registration stays in the store: {}", self.name(), e.toString());
        }
        log.info("{} left the group", self.name());
    }

    /** How long one member may take to hear of the departure: what is left, or the agent's timeout. */
    private Duration callBound() {
        Duration left = remaining();
        return left.isZero() ? agent.getRpcTimeout() : left;
    }

    private Duration remaining() {
        return GracefulShutdown.remaining(timeout, start, this::timedOut);
    }

    private RpcException timedOut() {
        return new RpcException(RpcException.Code.TIMEOUT, agent.getWorkerInfo().name() + " did not leave the group"
                + " within " + Durations.describe(timeout) + " (still busy here: " + pending.applicationCalls()
                + " calls awaiting answers, "
                + incoming.active() + " requests running)");
    }
}
