package dev.ferry.distributed.internal;

import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.SequencedSet;

/**
 * What this worker knows of other workers' contexts that ended, so that a message of one that
 * comes after its end (a call held up on the way, which the release overtook; a nested call made
 * by a handler that outlived the context) does not create the context again: nobody would release
 * it a second time. A message of context {@code (id, incarnation)} comes late when
 * <ul>
 *   <li>a release of it came here (from its creator or passed on by another worker): the
 *       {@value #CAPACITY} latest are remembered (two longs and an entry each, under 100 KiB);</li>
 *   <li>its creator's releases said that every context it made before {@code id} had been closed
 *       (each release carries the creator's oldest context still open);</li>
 *   <li>or it is of an earlier incarnation of its creator than one seen here already (a restarted
 *       worker's ids start over: its new contexts are not the old ones).</li>
 * </ul>
 * Per creator, one incarnation and its mark are kept: a few bytes per worker of the group.
 *
 * <p>This class is thread-safe.
 */
final class ReleasedContexts {
    static final int CAPACITY = 1_024;

    /** The latest incarnation of a creator seen here, and the count below which all its contexts were closed. */
    private record Creator(long incarnation, long closedBelow) {
    }

    private final SequencedSet<ContextKey> released = new LinkedHashSet<>();
    private final Map<Integer, Creator> creators = new HashMap<>();

    /**
     * Notes that a message of incarnation {@code incarnation} of worker {@code creator} came.
     * Returns true if an earlier incarnation of it was seen before: the contexts of that one are over.
     */
    synchronized boolean seen(int creator, long incarnation) {
        Creator known = creators.get(creator);
        if (known != null && known.incarnation() >= incarnation) {
            return false;
        }
        creators.put(creator, new Creator(incarnation, 0));
        return known != null;
    }

    /**
     * Remembers the release of {@code context}, whose creator had closed every context it made
     * before count {@code closedBelow}. Returns true if that told something new of the creator: a
     * later incarnation, or a higher mark (contexts here below it are over too).
     */
    synchronized boolean add(ContextKey context, long closedBelow) {
        if (released.add(context) && released.size() > CAPACITY) {
            released.removeFirst();
        }
        Creator known = creators.get(context.creator());
        long incarnation = context.creatorIncarnation();
        if (known == null || known.incarnation() < incarnation
                || known.incarnation() == incarnation && known.closedBelow() < closedBelow) {
            creators.put(context.creator(), new Creator(incarnation, closedBelow));
            return true;
        }
        return false;
    }

    /** Whether {@code context} ended, as far as this worker knows: a message of it comes late. */
    synchronized boolean ended(ContextKey context) {
        Creator known = creators.get(context.creator());
        if (known != null && (context.creatorIncarnation() < known.incarnation()
                || context.creatorIncarnation() == known.incarnation()
                && (context.id() & ContextContainer.COUNTER_MASK) < known.closedBelow())) {
            return true;
        }
        return released.contains(context);
    }

    /** The count below which every context of {@code creator}'s {@code incarnation} was closed (0 if unknown). */
    synchronized long closedBelow(int creator, long incarnation) {
        Creator known = creators.get(creator);
        return known != null && known.incarnation() == incarnation ? known.closedBelow() : 0;
    }

    /** How many releases are remembered. */
    synchronized int size() {
        return released.size();
    }
}
