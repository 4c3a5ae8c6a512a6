package dev.ferry.rpc.internal.serial;

import org.apache.fory.memory.MemoryBuffer;

/**
 * The function identities this JVM has decoded, so that a call naming a method seen before
 * allocates nothing for it: not its three names, not its {@link FunctionRef.MethodKey}, not its
 * display name (with a few hundred bytes per call in all, these were a fifth of what a small call
 * allocated on the callee).
 *
 * <p>A direct-mapped table: an identity is looked up by a hash of its wire bytes, compared byte for
 * byte, and decoded (and stored, replacing what the slot held) only on a miss. A collision or an
 * eviction costs one decode; no input can make the table grow. Entries are immutable, so slots are
 * read and written without locks (final fields publish them safely).
 */
final class FunctionIdentities {
    /** Longest identity accepted: two names and a descriptor, each written with a 2-byte length. */
    static final int MAX_BYTES = 3 * (2 + 65_535) + 4;
    private static final int SLOTS = 1024;

    static final FunctionIdentities SHARED = new FunctionIdentities();

    private final Entry[] slots = new Entry[SLOTS];

    /** {@code words}: the identity's bytes as {@link MemoryBuffer#getInt64} reads them, 8 at a time. */
    private record Entry(byte[] bytes, long[] words, int hash, FunctionRef.Identity identity) {
        static Entry of(byte[] bytes, int hash, FunctionRef.Identity identity) {
            MemoryBuffer view = MemoryBuffer.fromByteArray(bytes);
            long[] words = new long[bytes.length / Long.BYTES];
            for (int w = 0; w < words.length; w++) {
                words[w] = view.getInt64(w * Long.BYTES);
            }
            return new Entry(bytes, words, hash, identity);
        }
    }

    /** Reads an identity of {@code length} bytes at the buffer's reader index and moves past it. */
    FunctionRef.Identity read(MemoryBuffer buffer, int length) {
        if (length < 0 || length > MAX_BYTES || length > buffer.remaining()) {
            throw new IllegalArgumentException("function identity of " + length + " bytes with " + buffer.remaining()
                    + " bytes left in the message");
        }
        int start = buffer.readerIndex();
        // Eight bytes at a time: every small request passes here, and the byte loops over its ~100
        // bytes of names held a tenth of the callee's request-thread samples in W2's profile (part
        // of that is the first touch of the message's bytes, which stays).
        int hash = length;
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES) {
            hash = 31 * hash + Long.hashCode(buffer.getInt64(start + i));
        }
        for (; i < length; i++) {
            hash = 31 * hash + buffer.getByte(start + i);
        }
        int slot = (hash ^ (hash >>> 16)) & (SLOTS - 1);
        Entry entry = slots[slot];
        if (entry != null && entry.hash == hash && sameBytes(entry, buffer, start, length)) {
            buffer.increaseReaderIndex(length);
            return entry.identity;
        }
        byte[] bytes = buffer.readBytes(length);
        FunctionRef.Identity identity = FunctionRef.Identity.decode(bytes, length);
        slots[slot] = Entry.of(bytes, hash, identity);
        return identity;
    }

    private static boolean sameBytes(Entry known, MemoryBuffer buffer, int start, int length) {
        if (known.bytes.length != length) {
            return false;
        }
        long[] words = known.words;
        for (int w = 0; w < words.length; w++) {
            if (words[w] != buffer.getInt64(start + w * Long.BYTES)) {
                return false;
            }
        }
        for (int i = words.length * Long.BYTES; i < length; i++) {
            if (known.bytes[i] != buffer.getByte(start + i)) {
                return false;
            }
        }
        return true;
    }
}
