package dev.ferry.rpc.internal.rref;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.internal.concurrent.ActivityCounter;
import dev.ferry.rpc.internal.concurrent.FutureCompleter;
import dev.ferry.rpc.spi.RetriedSends;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The RRef protocol's control messages in flight (fork requests, child acceptances, user deletes),
 * by the peer each goes to. A message whose send failed ({@link RpcException.Code#UNAVAILABLE}: it
 * did not reach its peer) is sent again by {@link RetriedSends}, up to 5 more times with a doubling
 * backoff from 50 ms, as PyTorch retries them. Each is idempotent: a fork request or
 * child acceptance that arrives twice, or a delete of a fork already deleted, is ignored.
 *
 * <p>A message to a peer that is gone ends at once instead: one that fails while its peer is lost
 * is not sent again (a dead peer fails every retry, and the bookkeeping would wait for the last,
 * 1.55 s after the first failure), and those still in flight when the peer is declared gone
 * ({@link #peerGone}) end then, with why.
 *
 * <p>This class is thread-safe.
 */
final class ControlMessages {
    private static final Logger log = LoggerFactory.getLogger(ControlMessages.class);

    private final RRefHost host;
    /** Whether the context closed: nothing is sent again after that. */
    private final BooleanSupplier closed;
    private final ActivityCounter inFlight = new ActivityCounter();
    /** The outcomes of the messages in flight, by the peer they go to; guarded by itself. */
    private final Map<WorkerInfo, Set<RpcFuture<Object>>> byPeer = new HashMap<>();

    ControlMessages(RRefHost host, BooleanSupplier closed) {
        this.host = host;
        this.closed = closed;
    }

    /**
     * Sends one message to {@code to} by {@code send}, again when that fails as above. Returns the
     * outcome of the last attempt (or why its peer is gone); counted in flight until then.
     */
    RpcFuture<Object> send(WorkerInfo to, Supplier<RpcFuture<Object>> send) {
        inFlight.increment();
        RpcFuture<Object> outcome = RetriedSends.send(host.self().name() + ": RRef control message to " + to.name(),
                send, () -> !closed.getAsBoolean() && !host.isLost(to), host::schedule);
        synchronized (byPeer) {
            byPeer.computeIfAbsent(to, peer -> ConcurrentHashMap.newKeySet()).add(outcome);
        }
        // added after it is tracked: an outcome done already is untracked again at once
        outcome.addDoneCallback(done -> ended(to, done));
        return outcome;
    }

    private void ended(WorkerInfo to, RpcFuture<Object> outcome) {
        synchronized (byPeer) {
            Set<RpcFuture<Object>> pending = byPeer.get(to);
            if (pending != null && pending.remove(outcome) && pending.isEmpty()) {
                byPeer.remove(to);
            }
        }
        if (outcome.failed() && !host.isLost(to)) {
            log.warn("{}: RRef control message to {} failed: {}", host.self().name(), to.name(),
                    outcome.exceptionNow().toString());
        } else if (outcome.failed()) { // expected: its peer is gone, which was logged once
            log.debug("{}: RRef control message to {}, which is gone, failed: {}", host.self().name(), to.name(),
                    outcome.exceptionNow().toString());
        }
        inFlight.decrement();
    }

    /** {@code peer} is gone: the messages in flight to it end now, failed with {@code gone}. */
    void peerGone(WorkerInfo peer, RpcException gone) {
        List<RpcFuture<Object>> ending;
        synchronized (byPeer) {
            Set<RpcFuture<Object>> pending = byPeer.get(peer);
            ending = pending == null ? List.of() : new ArrayList<>(pending);
        }
        ending.forEach(outcome -> FutureCompleter.tryFail(outcome, gone));
    }

    /** How many messages are in flight (PyTorch's {@code num_pending_futures}). */
    int inFlight() {
        return inFlight.get();
    }

    /** Waits until no message is in flight; zero timeout means no limit. */
    boolean awaitQuiet(Duration timeout) throws InterruptedException {
        return inFlight.awaitZero(timeout);
    }
}
