package dev.ferry.rpc.internal.transport;

import java.util.Map;
import java.util.TreeMap;

/**
 * The free ranges of one block of memory, lent first fit: {@link LargeBufferPool}'s regions and
 * the shared-memory segment ({@link SharedSegment}) both lend from one. A returned range merges
 * with free neighbours, so the ranges are never adjacent and small ones become large ones again.
 *
 * <p>Not thread-safe: its owner guards it.
 */
final class FreeRanges {
    /** Offset to length. */
    private final TreeMap<Integer, Integer> free = new TreeMap<>();
    private final int start;
    private final int end;

    /** All of {@code [start, end)} free. */
    FreeRanges(int start, int end) {
        this.start = start;
        this.end = end;
        if (end > start) {
            free.put(start, end - start);
        }
    }

    /** Takes {@code length} bytes from the first free range large enough: its offset, or -1. */
    int take(int length) {
        for (Map.Entry<Integer, Integer> range : free.entrySet()) {
            int size = range.getValue();
            if (size >= length) {
                int offset = range.getKey();
                // Read before removing: TreeMap may reuse the removed entry for its successor.
                free.remove(offset);
                if (size > length) {
                    free.put(offset + length, size - length);
                }
                return offset;
            }
        }
        return -1;
    }

    /** Gives back {@code [offset, offset + length)}, which {@link #take} lent. */
    void release(int offset, int length) {
        Map.Entry<Integer, Integer> before = free.floorEntry(offset);
        if (before != null && before.getKey() + before.getValue() == offset) {
            offset = before.getKey();
            length += before.getValue();
            free.remove(before.getKey());
        }
        Integer after = free.get(offset + length);
        if (after != null) {
            free.remove(offset + length);
            length += after;
        }
        free.put(offset, length);
    }

    /** Whether nothing is lent. */
    boolean whollyFree() {
        Integer whole = free.get(start);
        return end <= start || whole != null && whole == end - start;
    }
}
