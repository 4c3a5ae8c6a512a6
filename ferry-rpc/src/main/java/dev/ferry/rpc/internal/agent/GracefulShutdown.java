package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.internal.text.Durations;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The graceful part of shutdown (PyTorch's {@code _wait_all_workers} and {@code join}): wait
 * until every worker has reached shutdown, then, round after round, until no worker has
 * application calls in flight in either direction. A call in flight is counted by its caller until
 * the answer arrives, and the answer comes only after the callee finished, so a round in which
 * every worker reports zero means the group is idle.
 *
 * <p>"Every worker" is every worker that is not lost ({@link PeerLiveness}: killed, stopped, cut
 * off): the gathers never wait for one known to be dead, so the survivors complete among
 * themselves, and each reports who was missing ({@link #run} logs them; the agent's debug info keeps
 * them under {@code agent.shutdown.missing}).
 */
final class GracefulShutdown {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(GracefulShutdown.class);
    private final DefaultRpcAgent agent;
    private final PendingCalls pending;
    private final IncomingCalls incoming;
    private final long start = System.nanoTime();
    private final Duration timeout;
    private static final long MAX_PAUSE_NANOS = 50_000_000;

    GracefulShutdown(DefaultRpcAgent agent, PendingCalls pending, IncomingCalls incoming, Duration timeout) {
        this.agent = agent;
        this.pending = pending;
        this.incoming = incoming;
        this.timeout = timeout;
    }

    void run() {
        long pause = 100_000;
        agent.allGathers().runShutdown("shutdown", remaining());
        // PyTorch's _delete_all_user_and_unforked_owner_rrefs: users still referenced are released,
        // so their deletes reach the owners before the group closes.
        agent.rrefs().releaseAllUsers();
        agent.userDeletes().flushAll();
        while (true) {
            try {
                if (!pending.awaitNoApplicationCalls(remaining()) || !incoming.awaitIdle(remaining())
                        || !agent.rrefs().awaitQuiet(remaining())) {
                    throw timedOut();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RpcException(RpcException.Code.INTERNAL, "interrupted during graceful shutdown", e);
            }
            agent.rrefs().releaseAllUsers();
            agent.userDeletes().flushAll();
            int local = pending.applicationCalls() + incoming.active() + agent.rrefs().busy();
            Map<String, Object> busy = agent.allGathers().runShutdown(local, remaining());
            if (busy.values().stream().mapToInt(v -> (Integer) v).sum() == 0) {
                reportMissing(busy.keySet());
                return;
            }
            // Some worker is still busy: give it time before the next round, backing off so a long
            // tail of work does not turn into a storm of gathers.
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
        }
    }

    /** Logs, and has the agent keep, the members that did not take part: lost ones, with why. */
    private void reportMissing(java.util.Set<String> tookPart) {
        Map<String, String> lost = agent.liveness().lost();
        Map<String, String> missing = new java.util.TreeMap<>();
        for (dev.ferry.rpc.WorkerInfo worker : agent.directory().workers()) {
            if (!tookPart.contains(worker.name())) {
                missing.put(worker.name(), lost.getOrDefault(worker.name(), "lost by the others"));
            }
        }
        if (!missing.isEmpty()) {
            log.warn("{}: graceful shutdown completed among {} without {}", agent.getWorkerInfo().name(),
                    new java.util.TreeSet<>(tookPart), missing);
        }
        agent.shutdownMissing(missing);
    }

    private Duration remaining() {
        return remaining(timeout, start, this::timedOut);
    }

    /**
     * What is left of {@code timeout} since {@code startNanos}: zero means no limit, so an expired
     * one throws {@code expired}'s exception (graceful shutdown's and a departure's rule).
     */
    static Duration remaining(Duration timeout, long startNanos, Supplier<RpcException> expired) {
        if (timeout.isZero()) {
            return Duration.ZERO;
        }
        Duration left = timeout.minusNanos(System.nanoTime() - startNanos);
        if (left.isNegative() || left.isZero()) {
            throw expired.get();
        }
        return left;
    }

    private RpcException timedOut() {
        return new RpcException(RpcException.Code.TIMEOUT, "graceful shutdown of " + agent.getWorkerInfo().name()
                + " did not complete within " + Durations.describe(timeout) + " (still busy here: "
                + pending.applicationCalls() + " calls awaiting answers, " + incoming.active() + " requests running, RRefs "
                + agent.rrefs().debugInfo() + ")");
    }
}
