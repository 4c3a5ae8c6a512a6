package dev.ferry.rpc;

/**
 * Hears how the group changes while this worker runs: workers that join it (a new member, a
 * restarted worker's new incarnation, a lost one that answers again), leave it on their own, or
 * are lost (died, hang, cut off by the network, replaced by a new incarnation of themselves).
 * {@link RpcAgent#getWorkerInfos()} changes the same way: it lists the members not lost.
 *
 * <pre>{@code
 * AutoCloseable watching = agent.addMembershipListener(new MembershipListener() {
 *     public void onJoined(WorkerInfo worker) {
 *         trainers.add(worker.name());
 *     }
 *     public void onLost(WorkerInfo worker, String reason) {
 *         trainers.remove(worker.name());
 *         log.warn("{} is lost: {}", worker.name(), reason);
 *     }
 * });
 * }</pre>
 *
 * <p>Called on the agent's timer thread, one event at a time, in the order this worker learned
 * them: keep it short and never wait there for a call's answer (start calls with {@code rpcAsync}
 * if you must). An exception it throws is logged and ignored. A lost worker that comes back (a
 * partition that healed) is reported joined again, so a worker may be reported lost more than once.
 */
public interface MembershipListener {

    /**
     * {@code worker} became a member: it joined the running group, came back as a new incarnation
     * after a restart (after {@link #onLost} of the old one), or answers again after it was lost.
     */
    default void onJoined(WorkerInfo worker) {
    }

    /** {@code worker} left the group on its own (a graceful departure); calls to it now fail at once. */
    default void onLeft(WorkerInfo worker) {
    }

    /**
     * {@code worker} is lost, for {@code reason}: its connection closed while the group ran, it sent
     * nothing for the heartbeat timeout, or a new incarnation of it replaced it. Its calls failed
     * with {@link RpcException.Code#UNAVAILABLE}; a later call to it tries again.
     */
    default void onLost(WorkerInfo worker, String reason) {
    }
}
