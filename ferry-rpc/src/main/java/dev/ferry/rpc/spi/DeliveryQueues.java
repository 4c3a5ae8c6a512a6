package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.function.Function;

/**
 * Idempotent messages that must reach their targets for as long as each is a member of the group,
 * waiting per target in one queue: one entry per key (an entry queued again while its key waits
 * is sent once), so a queue never holds more than there are things to release there. One message
 * at a time carries what waits for a target (up to {@code batch} entries): an entry goes at once
 * when no message to that target is on its way, else with the next one. A message that does not
 * get through is sent again as {@link RetriedSends#untilDelivered} sends it (50 ms, doubling, up to
 * every 5 s; a warning after six sends) while {@link Targets#reachable} holds; a target that is no
 * longer reachable, or {@link #forget forgotten} (it left, was lost for good, restarted), drops its
 * queue: it holds nothing of ours any more. A message refused otherwise (the target ran it and
 * failed) is logged and not sent again; what queued behind it is.
 *
 * <p>Ferry's RRef protocol queues so what it owes a peer it lost for now (deletes, acceptances);
 * ferry-distributed its releases of autograd contexts.
 *
 * <pre>{@code
 * DeliveryQueues<String, Long, Long> releases = new DeliveryQueues<>(targets, id -> id, 1_024,
 *         RetriedSends::onVirtualThread);
 * releases.send("worker2", 7L);   // now, or with the message on its way to worker2
 * }</pre>
 *
 * <p>This class is thread-safe; sends run on the scheduler's threads, never under its lock.
 *
 * @param <T> the targets (workers), with {@code equals} and {@code hashCode}
 * @param <K> what an entry is about: one entry per key and target
 * @param <V> the entries
 */
public final class DeliveryQueues<T, K, V> {
    private static final Logger log = LoggerFactory.getLogger(DeliveryQueues.class);

    /** Where the entries go. */
    public interface Targets<T, V> {
        /** Whether {@code target} is still a member that takes our messages (and the sender runs). */
        boolean reachable(T target);

        /** Names a message carrying {@code entries} to {@code target}, for the log. */
        String describe(T target, List<V> entries);

        /** Sends {@code target} one message carrying {@code entries}; its answer says they arrived. */
        RpcFuture<?> send(T target, List<V> entries);
    }

    /** The entries waiting for one target. */
    private final class Queue {
        final T target;
        final SequencedMap<K, V> waiting = new LinkedHashMap<>();

        Queue(T target) {
            this.target = target;
        }
    }

    private final Targets<T, V> targets;
    private final Function<V, K> key;
    private final int batch;
    private final RetriedSends.Scheduler scheduler;
    /** The queues with entries waiting or on their way, by target; a queue is busy while it is here. Guarded by this. */
    private final Map<T, Queue> queues = new HashMap<>();

    /**
     * @param key       what an entry is about (entries of one key and target are sent once)
     * @param batch     the most entries one message carries
     * @param scheduler runs sends later, on threads that may send
     */
    public DeliveryQueues(Targets<T, V> targets, Function<V, K> key, int batch, RetriedSends.Scheduler scheduler) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be at least 1, got " + batch);
        }
        this.targets = targets;
        this.key = key;
        this.batch = batch;
        this.scheduler = scheduler;
    }

    /** Sends {@code entry} to {@code target}: now, or with the next message to it. */
    public void send(T target, V entry) {
        Queue started;
        synchronized (this) {
            Queue queue = queues.get(target);
            if (queue != null) {
                queue.waiting.putIfAbsent(key.apply(entry), entry);
                return; // the message on its way takes it along, or the next one does
            }
            started = new Queue(target);
            started.waiting.put(key.apply(entry), entry);
            queues.put(target, started);
        }
        scheduler.schedule(() -> flush(started), 0);
    }

    /** Drops what waits for {@code target}: it is gone (a message on its way is answered in vain). */
    public synchronized void forget(T target) {
        queues.remove(target);
    }

    /** How many entries wait to get through, over all targets. */
    public synchronized int waiting() {
        int waiting = 0;
        for (Queue queue : queues.values()) {
            waiting += queue.waiting.size();
        }
        return waiting;
    }

    private synchronized boolean current(Queue queue) {
        return queues.get(queue.target) == queue;
    }

    private void flush(Queue queue) {
        boolean reachable = targets.reachable(queue.target);
        List<V> entries = new ArrayList<>();
        synchronized (this) {
            if (queues.get(queue.target) != queue) {
                return; // forgotten meanwhile
            }
            for (V entry : queue.waiting.values()) {
                if (entries.size() == batch) {
                    break;
                }
                entries.add(entry);
            }
            if (!reachable) {
                queues.remove(queue.target);
            }
        }
        String what = targets.describe(queue.target, entries);
        if (!reachable) {
            log.debug("{} dropped: its target is not a member any more", what);
            return;
        }
        RetriedSends.untilDelivered(what, () -> targets.send(queue.target, entries),
                        () -> current(queue) && targets.reachable(queue.target), scheduler)
                .addDoneCallback(done -> answered(queue, entries, what, done.failed() ? done.exceptionNow() : null));
    }

    /** {@code entries}' message got through, or ended with {@code failure}: the next message, if any. */
    private void answered(Queue queue, List<V> entries, String what, Throwable failure) {
        boolean more;
        synchronized (this) {
            if (queues.get(queue.target) != queue) {
                return; // forgotten: the target is gone
            }
            for (V entry : entries) {
                queue.waiting.remove(key.apply(entry));
            }
            more = !queue.waiting.isEmpty();
            if (!more) {
                queues.remove(queue.target);
            }
        }
        if (failure != null && targets.reachable(queue.target)) {
            log.warn("{} failed: {}", what, failure.toString()); // refused: sending it again would be too
        } else if (failure != null) {
            log.debug("{} failed, and its target is not a member any more: {}", what, failure.toString());
        }
        if (more) {
            scheduler.schedule(() -> flush(queue), 0);
        }
    }
}
