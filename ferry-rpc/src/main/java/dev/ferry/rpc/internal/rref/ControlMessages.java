package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.GloballyUniqueId;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.concurrent.ActivityCounter;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.spi.DeliveryQueues;
import dev.ferry.rpc.spi.RetriedSends;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The RRef protocol's control messages (fork requests, child acceptances, user deletes), by the
 * peer each goes to. Each is idempotent (a fork request or child acceptance that arrives twice, or
 * a delete of a fork already deleted, is ignored), so each is sent until it gets through
 * ({@link RetriedSends#untilDelivered}: again after 50 ms, doubling up to every 5 s, on
 * {@code UNAVAILABLE} or {@code TIMEOUT}) while its peer is the member it was sent to (the same
 * incarnation) and not lost; in flight until then ({@code num_pending_futures}).
 *
 * <p>A message to a peer that is lost (its connection closed, or silent for the heartbeat timeout)
 * ends there instead ({@link #peerLost}): its RRefs are given up here, so nothing here waits for
 * it. A delete or child acceptance is still owed to that peer, which may only have been cut off for
 * a while and still holds the value, or a fork that waits for this acceptance: it goes on in the
 * {@link #undelivered} queues (one entry per message, one message at a time per peer, sent again up
 * to every 5 s while the peer is a member of the group), no longer counted in flight. A peer that
 * leaves or restarts ({@link #peerGone}) holds nothing of ours any more: what is on its way to it
 * ends, and what is owed to it is dropped.
 *
 * <p>This class is thread-safe.
 */
final class ControlMessages {
    private static final Logger log = LoggerFactory.getLogger(ControlMessages.class);
    /** The most owed messages sent together to a peer that was lost. */
    private static final int OWED_BATCH = 1_024;

    /** The three messages; a fork request is about this worker's own fork, the others are owed to their peer. */
    enum Kind {
        FORK_REQUEST, CHILD_ACCEPT, USER_DELETE
    }

    /** One message; {@code send} makes one attempt of it. */
    private record Message(Kind kind, WorkerInfo to, long incarnation, GloballyUniqueId forkId,
                           Supplier<RpcFuture<Object>> send) {
        /** What an owed message is about: a repeat is sent once. */
        Owed key() {
            return new Owed(kind, forkId);
        }

        String describe() {
            return "RRef " + kind + " of fork " + forkId + " to " + to.name();
        }
    }

    private record Owed(Kind kind, GloballyUniqueId forkId) {
    }

    private final RRefHost host;
    /** Whether the context closed: nothing is sent again after that. */
    private final BooleanSupplier closed;
    private final ActivityCounter inFlight = new ActivityCounter();
    /** The outcomes of the messages in flight, by the peer they go to; guarded by itself. */
    private final Map<WorkerInfo, Map<RpcFuture<Object>, Message>> byPeer = new HashMap<>();
    /** What is owed to peers that were lost, by peer. */
    private final DeliveryQueues<WorkerInfo, Owed, Message> undelivered;

    ControlMessages(RRefHost host, BooleanSupplier closed) {
        this.host = host;
        this.closed = closed;
        this.undelivered = new DeliveryQueues<>(new OwedTo(), Message::key, OWED_BATCH, host::schedule);
    }

    /**
     * Sends one message of {@code kind} about {@code forkId} to {@code to} by {@code send}, again
     * until it gets through as above. Returns the outcome of the last attempt (or why its peer is
     * lost or gone); counted in flight until then. A delete or acceptance to a peer lost now is owed
     * at once; its outcome then completes when it is queued.
     */
    RpcFuture<Object> send(Kind kind, WorkerInfo to, GloballyUniqueId forkId, Supplier<RpcFuture<Object>> send) {
        Message message = new Message(kind, to, host.incarnation(to), forkId, send);
        if (kind != Kind.FORK_REQUEST && host.isLost(to)) {
            owe(message);
            return RpcFuture.completed(Boolean.TRUE);
        }
        inFlight.increment();
        RpcFuture<Object> outcome = RetriedSends.untilDelivered(host.self().name() + ": " + message.describe(), send,
                () -> stillOwed(message) && !host.isLost(to), host::schedule);
        synchronized (byPeer) {
            byPeer.computeIfAbsent(to, peer -> new ConcurrentHashMap<>()).put(outcome, message);
        }
        // added after it is tracked: an outcome done already is untracked again at once
        outcome.addDoneCallback(done -> ended(message, done));
        return outcome;
    }

    private void ended(Message message, RpcFuture<Object> outcome) {
        WorkerInfo to = message.to();
        synchronized (byPeer) {
            Map<RpcFuture<Object>, Message> pending = byPeer.get(to);
            if (pending != null && pending.remove(outcome) != null && pending.isEmpty()) {
                byPeer.remove(to);
            }
        }
        if (outcome.failed() && message.kind() != Kind.FORK_REQUEST && host.isLost(to) && stillOwed(message)) {
            owe(message); // its peer was lost meanwhile: owed to it
        } else if (outcome.failed() && stillOwed(message)) {
            log.warn("{}: {} failed: {}", host.self().name(), message.describe(), outcome.exceptionNow().toString());
        } else if (outcome.failed()) { // expected: its peer is lost or gone, which was logged once
            log.debug("{}: {}, whose peer is lost or gone, failed: {}", host.self().name(), message.describe(),
                    outcome.exceptionNow().toString());
        }
        inFlight.decrement();
    }

    /** Whether {@code message} still has a peer to reach: the incarnation it was for, and this context open. */
    private boolean stillOwed(Message message) {
        long now = host.incarnation(message.to());
        return !closed.getAsBoolean() && now >= 0 && now == message.incarnation();
    }

    private void owe(Message message) {
        if (stillOwed(message)) {
            log.debug("{}: {} is owed to its peer, which is lost for now: sent again until it gets through",
                    host.self().name(), message.describe());
            undelivered.send(message.to(), message);
        }
    }

    /**
     * {@code peer} is lost for now (it may come back): the fork requests in flight to it end with
     * {@code lost}; its deletes and acceptances are owed to it from now on.
     */
    void peerLost(WorkerInfo peer, RpcException lost) {
        endInFlight(peer, lost);
    }

    /** {@code peer} left or restarted: what is on its way to it ends with {@code gone}, and nothing is owed to it. */
    void peerGone(WorkerInfo peer, RpcException gone) {
        undelivered.forget(peer);
        endInFlight(peer, gone);
    }

    private void endInFlight(WorkerInfo peer, RpcException why) {
        List<RpcFuture<Object>> ending;
        synchronized (byPeer) {
            Map<RpcFuture<Object>, Message> pending = byPeer.get(peer);
            ending = pending == null ? List.of() : new ArrayList<>(pending.keySet());
        }
        ending.forEach(outcome -> FutureCompleter.tryFail(outcome, why));
    }

    /** How many messages are in flight (PyTorch's {@code num_pending_futures}). */
    int inFlight() {
        return inFlight.get();
    }

    /** How many messages are owed to peers that were lost and are still members. */
    int undelivered() {
        return undelivered.waiting();
    }

    /** Waits until no message is in flight; zero timeout means no limit. */
    boolean awaitQuiet(Duration timeout) throws InterruptedException {
        return inFlight.awaitZero(timeout);
    }

    /** The peers owed messages go to: members of the incarnation each message was for. */
    private final class OwedTo implements DeliveryQueues.Targets<WorkerInfo, Message> {
        @Override
        public boolean reachable(WorkerInfo peer) {
            return !closed.getAsBoolean() && host.incarnation(peer) >= 0;
        }

        @Override
        public String describe(WorkerInfo peer, List<Message> messages) {
            return host.self().name() + ": " + messages.size() + " RRef message(s) owed to " + peer.name()
                    + (messages.isEmpty() ? "" : " (" + messages.getFirst().describe() + (messages.size() > 1 ? ", ..." : "")
                    + ")");
        }

        /** Sends each message once; the answer fails when one of them did not get through (a repeat is ignored). */
        @Override
        public RpcFuture<?> send(WorkerInfo peer, List<Message> messages) {
            long now = host.incarnation(peer);
            List<RpcFuture<?>> sent = new ArrayList<>();
            for (Message message : messages) {
                if (message.incarnation() == now) { // not one of an incarnation that restarted since
                    sent.add(message.send().get());
                }
            }
            return RpcFuture.collectAll(sent); // fails with the first that did not get through: all go again
        }
    }
}
