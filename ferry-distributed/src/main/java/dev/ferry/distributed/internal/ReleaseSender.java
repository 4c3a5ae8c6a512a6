package dev.ferry.distributed.internal;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFuture;
import dev.ferry.rpc.spi.RetriedSends;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

/**
 * Sends the releases of distributed autograd contexts to the workers they reached, until each is
 * answered. Per worker, the releases not answered yet wait in one queue, one entry per context (a
 * context released twice is sent once), and one message at a time carries them (up to
 * {@value #BATCH}): a release goes at once when no message to that worker is on its way, else with
 * the next one. A message that does not reach its worker ({@code UNAVAILABLE}, or a
 * {@code TIMEOUT}: a release may arrive twice) is sent again {@link RetriedSends#FIRST_RETRY}
 * later, then twice as long after each next failure up to every {@link #MAX_INTERVAL}, for as long
 * as the worker is a member of the group and this agent runs: a release given up would leave the
 * context's graph and gradients on that worker for as long as the creator lives. The worker's loss
 * or departure drops its queue ({@link #forget}): it holds nothing of ours any more.
 *
 * <p>The queues hold one entry per context and worker it reached, never more than that worker
 * holds itself for the same contexts. This class is thread-safe; sends run on the scheduler's
 * threads, never under its lock.
 */
final class ReleaseSender {
    private static final Logger log = LoggerFactory.getLogger(ReleaseSender.class);
    /** The most releases one message carries (24 bytes each). */
    static final int BATCH = 1_024;
    /** The longest wait between two sends to a worker that does not take them. */
    static final Duration MAX_INTERVAL = Duration.ofSeconds(5);
    /** After as many failed sends as a {@link RetriedSends} message makes, the failure is worth a warning. */
    private static final int QUIET_FAILURES = 1 + RetriedSends.MAX_RETRIES;

    /** A release of {@code context}, whose creator had closed every context it made before count {@code closedBelow}. */
    record Release(ContextKey context, long closedBelow) {
    }

    /** The workers releases go to. */
    interface Peers {
        /** Whether {@code worker} is a member not known lost and this agent runs. */
        boolean reachable(int worker);

        String name(int worker);

        /** Sends {@code worker} one message carrying {@code releases}; its answer says they arrived. */
        RpcFuture<?> send(int worker, List<Release> releases);
    }

    /** The releases waiting for one worker. */
    private static final class Queue {
        final int worker;
        final SequencedMap<ContextKey, Release> waiting = new LinkedHashMap<>();
        int failures;

        Queue(int worker) {
            this.worker = worker;
        }
    }

    private final Peers peers;
    private final RetriedSends.Scheduler scheduler;
    /** The queues with releases waiting or on their way, by worker; a queue is busy while it is here. Guarded by this. */
    private final Map<Integer, Queue> queues = new HashMap<>();

    ReleaseSender(Peers peers, RetriedSends.Scheduler scheduler) {
        this.peers = peers;
        this.scheduler = scheduler;
    }

    /** Sends {@code release} to {@code worker}: now, or with the next message to it. */
    void send(int worker, Release release) {
        Queue started;
        synchronized (this) {
            Queue queue = queues.get(worker);
            if (queue != null) {
                queue.waiting.putIfAbsent(release.context(), release);
                return; // its message on the way, or its retry, takes it along
            }
            started = new Queue(worker);
            started.waiting.put(release.context(), release);
            queues.put(worker, started);
        }
        scheduler.schedule(() -> flush(started), 0);
    }

    /** Drops what waits for {@code worker}: it is lost or gone (a message on its way is answered in vain). */
    synchronized void forget(int worker) {
        queues.remove(worker);
    }

    /** How many releases wait for an answer, over all workers. */
    synchronized int waiting() {
        int waiting = 0;
        for (Queue queue : queues.values()) {
            waiting += queue.waiting.size();
        }
        return waiting;
    }

    private void flush(Queue queue) {
        boolean reachable = peers.reachable(queue.worker);
        List<Release> batch = new ArrayList<>();
        synchronized (this) {
            if (queues.get(queue.worker) != queue) {
                return; // forgotten meanwhile
            }
            for (Release release : queue.waiting.values()) {
                if (batch.size() == BATCH) {
                    break;
                }
                batch.add(release);
            }
            if (!reachable) {
                queues.remove(queue.worker); // left, lost, or this agent closed: nothing to release there
            }
        }
        if (!reachable) {
            log.debug("{} dropped: it is not a member any more", describe(queue, batch));
            return;
        }
        RpcFuture<?> sent;
        try {
            sent = peers.send(queue.worker, batch);
        } catch (RuntimeException e) {
            answered(queue, batch, e); // could not even be made: sending it again would not help
            return;
        }
        sent.addDoneCallback(done -> answered(queue, batch, done.failed() ? done.exceptionNow() : null));
    }

    /** {@code batch}'s message was answered, or failed with {@code failure}: the next send, if any. */
    private void answered(Queue queue, List<Release> batch, Throwable failure) {
        boolean again = failure != null && retriable(failure) && peers.reachable(queue.worker);
        long delay = 0;
        int failures = 0;
        boolean more;
        synchronized (this) {
            if (queues.get(queue.worker) != queue) {
                return; // forgotten: the worker is lost or gone
            }
            if (again) {
                failures = ++queue.failures;
                delay = Math.min(RetriedSends.FIRST_RETRY.toNanos() << Math.min(failures - 1, 20), MAX_INTERVAL.toNanos());
                more = true;
            } else {
                queue.failures = 0; // answered, refused (a retry would be too), or its worker is no longer a member
                for (Release release : batch) {
                    queue.waiting.remove(release.context());
                }
                more = !queue.waiting.isEmpty();
                if (!more) {
                    queues.remove(queue.worker);
                }
            }
        }
        if (again && failures == QUIET_FAILURES) {
            log.warn("{} failed {} times; sending it again, every {} s at most, while {} is a member: {}",
                    describe(queue, batch), failures, MAX_INTERVAL.toSeconds(), peers.name(queue.worker), failure.toString());
        } else if (again) {
            log.debug("{} failed, sending it again in {} ms: {}", describe(queue, batch), delay / 1_000_000,
                    failure.toString());
        } else if (failure != null && peers.reachable(queue.worker)) {
            log.warn("{} failed: {}", describe(queue, batch), failure.toString());
        } else if (failure != null) {
            log.debug("{} failed, and it is not a member any more: {}", describe(queue, batch), failure.toString());
        }
        if (more) {
            scheduler.schedule(() -> flush(queue), delay);
        }
    }

    private String describe(Queue queue, List<Release> batch) {
        List<Long> ids = new ArrayList<>();
        for (Release release : batch.subList(0, Math.min(batch.size(), 8))) {
            ids.add(release.context().id());
        }
        return "release of autograd context" + (batch.size() == 1 ? " " + ids.getFirst()
                : "s " + ids + (batch.size() > ids.size() ? " and " + (batch.size() - ids.size()) + " more" : ""))
                + " on " + peers.name(queue.worker);
    }

    private boolean retriable(Throwable failure) {
        return failure instanceof RpcException e
                && (e.code() == RpcException.Code.UNAVAILABLE || e.code() == RpcException.Code.TIMEOUT);
    }
}
