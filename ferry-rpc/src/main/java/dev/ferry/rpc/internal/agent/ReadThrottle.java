package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.transport.PeerChannel;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receiving half of backpressure. Counts requests <em>queued</em>: received and not yet
 * started (waiting for one of the {@code numWorkerThreads} permits, {@link RequestLimiter}), with
 * their payload bytes. At the high mark it pauses reading on the connection that brought the last
 * one, and once both counts are below half it resumes every paused connection. The sender then
 * fills its socket buffer and its send queue, and its callers wait ({@code OutboundQueue}).
 *
 * <pre>
 *   arrived ──▶ queued ≥ max (or bytes ≥ maxBytes) ──▶ pause that connection
 *   left ─────▶ queued ≤ max/2 and bytes ≤ maxBytes/2 ──▶ resume all paused
 * </pre>
 *
 * <h2>Why a paused connection always resumes</h2>
 * A paused connection also holds back what follows the requests in it: answers to this worker's
 * calls and the peer's nested calls. Counting only requests that have not started is what keeps
 * that from deadlocking. A request leaves the count when it takes a permit ({@link #left}); the
 * queue then drains as long as permits come back, and they do: a handler returns its permit when
 * it finishes and while it blocks on a Ferry future (a nested call, {@code ManagedBlocking}), so
 * no handler waiting for an answer behind a pause keeps a queued request from starting. (A
 * first version counted requests until they finished: 1,000 handlers each waiting on a nested
 * call to their own worker kept the count above 1,024 for good, the nested calls were never
 * read, and every call timed out.) What the count does not bound is requests blocked on nested
 * calls: they hold a virtual thread each, as many as the callers have in flight.
 *
 * <p>This class is thread-safe. Pausing and resuming happen under one lock, taken only at the marks.
 */
final class ReadThrottle {
    private final int maxRequests;
    private final long maxBytes;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    private final Set<PeerChannel> paused = ConcurrentHashMap.newKeySet();
    /** Times a connection was paused, since start. */
    private final java.util.concurrent.atomic.LongAdder pauses = new java.util.concurrent.atomic.LongAdder();

    ReadThrottle(int maxRequests, long maxBytes) {
        this.maxRequests = maxRequests;
        this.maxBytes = maxBytes;
    }

    /** A request of {@code size} payload bytes arrived on {@code connection} (a transport thread). */
    void arrived(PeerChannel connection, long size) {
        int queued = requests.incrementAndGet();
        long queuedBytes = bytes.addAndGet(size);
        if (queued >= maxRequests || queuedBytes >= maxBytes) {
            synchronized (paused) {
                if (paused.add(connection)) {
                    pauses.increment();
                    connection.pauseReading(true);
                }
                // Everything may have finished between the count and the pause: nobody would resume.
                if (belowLowMark()) {
                    resumeAll();
                }
            }
        }
    }

    /** A request of {@code size} payload bytes left the queue: it started running, or was dropped. */
    void left(long size) {
        requests.decrementAndGet();
        bytes.addAndGet(-size);
        if (!paused.isEmpty()) {
            synchronized (paused) {
                if (belowLowMark()) {
                    resumeAll();
                }
            }
        }
    }

    /** Connections not being read now. */
    int pausedConnections() {
        return paused.size();
    }

    /** Times a connection was paused since start. */
    long pauses() {
        return pauses.sum();
    }

    int queuedRequests() {
        return requests.get();
    }

    private boolean belowLowMark() {
        return requests.get() <= maxRequests / 2 && bytes.get() <= maxBytes / 2;
    }

    /**
     * Caller holds the lock on {@code paused}: a pause and a resume of one connection never cross
     * (a resume that ran between another thread's decision to pause and its pause left the
     * connection paused for good, with nothing left to resume it).
     */
    private void resumeAll() {
        // Forgotten before resumed: a connection reading again is never still counted as paused.
        java.util.List<PeerChannel> resume = new java.util.ArrayList<>(paused);
        paused.clear();
        for (PeerChannel connection : resume) {
            connection.pauseReading(false);
        }
    }
}
