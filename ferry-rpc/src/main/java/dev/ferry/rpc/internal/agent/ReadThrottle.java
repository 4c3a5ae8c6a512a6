package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.internal.transport.Connection;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receiving half of backpressure. Counts requests received and not yet finished (queued for a
 * permit or running), with their payload bytes; at the high mark it pauses reading on the
 * connection that brought the last one, and once both counts are below half it resumes every
 * paused connection. The sender then fills its socket buffer and its send queue, and its callers
 * wait ({@code OutboundQueue}).
 *
 * <pre>
 *   arrived ──▶ queued ≥ max (or bytes ≥ maxBytes) ──▶ pause that connection
 *   finished ─▶ queued ≤ max/2 and bytes ≤ maxBytes/2 ──▶ resume all paused
 * </pre>
 *
 * <p>This class is thread-safe. Pausing and resuming happen under one lock, taken only at the marks.
 */
final class ReadThrottle {
    private final int maxRequests;
    private final long maxBytes;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    private final Set<Connection> paused = ConcurrentHashMap.newKeySet();

    ReadThrottle(int maxRequests, long maxBytes) {
        this.maxRequests = maxRequests;
        this.maxBytes = maxBytes;
    }

    /** A request of {@code size} payload bytes arrived on {@code connection} (a transport thread). */
    void arrived(Connection connection, long size) {
        int queued = requests.incrementAndGet();
        long queuedBytes = bytes.addAndGet(size);
        if (queued >= maxRequests || queuedBytes >= maxBytes) {
            synchronized (paused) {
                if (paused.add(connection)) {
                    connection.pauseReading(true);
                }
                // Everything may have finished between the count and the pause: nobody would resume.
                if (belowLowMark()) {
                    resumeAll();
                }
            }
        }
    }

    /** A request of {@code size} payload bytes finished (or was dropped). */
    void finished(long size) {
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
        java.util.List<Connection> resume = new java.util.ArrayList<>(paused);
        paused.clear();
        for (Connection connection : resume) {
            connection.pauseReading(false);
        }
    }
}
