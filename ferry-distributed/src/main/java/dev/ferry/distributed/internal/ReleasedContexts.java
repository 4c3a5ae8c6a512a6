package dev.ferry.distributed.internal;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.SequencedSet;

/**
 * The ids of other workers' contexts that their creators released here lately, so that a message
 * of one that comes after its release (a call held up on the way, which the release overtook)
 * does not create the context again: nobody would release it a second time. Bounded: the
 * {@value #CAPACITY} most recent (8 bytes and an entry each, well under 100 KiB); a message later
 * than that many releases creates its context as before.
 *
 * <p>A creator's ids go when it is lost or replaced by a new incarnation, whose context ids start
 * over. Only releases sent by the creator itself are remembered: one passed on by another worker
 * may come after the creator's new incarnation began to reuse the id.
 *
 * <p>This class is thread-safe.
 */
final class ReleasedContexts {
    static final int CAPACITY = 1_024;

    private final SequencedSet<Long> ids = new LinkedHashSet<>();

    synchronized void add(long id) {
        if (ids.add(id) && ids.size() > CAPACITY) {
            ids.removeFirst();
        }
    }

    synchronized boolean contains(long id) {
        return ids.contains(id);
    }

    /** Forgets the contexts worker {@code creator} created (it is gone; a new incarnation reuses their ids). */
    synchronized void forgetCreatedBy(int creator) {
        for (Iterator<Long> it = ids.iterator(); it.hasNext(); ) {
            if (ContextContainer.creatorOf(it.next()) == creator) {
                it.remove();
            }
        }
    }

    synchronized int size() {
        return ids.size();
    }
}
