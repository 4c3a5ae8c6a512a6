package dev.ferry.rpc.internal.store;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * The on-disk format of a {@code FileStore}: a header, then an append-only log of records that,
 * replayed in order, give the current key-value map. All integers are big-endian.
 * <pre>
 * header: | "FERRYFS1" (8 bytes) |
 *
 * record: +---------+--------------+-----------+------------------+-------------+
 *         | op (1)  | keyLen int32 | key UTF-8 | valueLen int32   | value bytes |
 *         +---------+--------------+-----------+------------------+-------------+
 *           1 = SET                              (SET only)         (SET only)
 *           2 = DELETE
 * </pre>
 * Unlike c10d's format, a delete is an explicit record, so an empty value is a value like any other.
 */
public final class FileStoreRecords {
    private FileStoreRecords() {
    }

    static final byte[] HEADER = "FERRYFS1".getBytes(StandardCharsets.US_ASCII);
    private static final byte OP_SET = 1;
    private static final byte OP_DELETE = 2;

    public static byte[] set(String key, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + 4 + k.length + 4 + value.length)
                .put(OP_SET).putInt(k.length).put(k).putInt(value.length).put(value).array();
    }

    public static byte[] delete(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + 4 + k.length).put(OP_DELETE).putInt(k.length).put(k).array();
    }

    /** Whether {@code header} is a FileStore header. */
    static boolean isHeader(byte[] header) {
        return Arrays.equals(header, HEADER);
    }

    /**
     * Applies every complete record in {@code log} to {@code entries}; returns how many bytes were
     * consumed, which is less than {@code log.remaining()} only if the log ends mid-record.
     *
     * @throws IllegalArgumentException for an unknown op or an impossible length
     */
    static int replay(ByteBuffer log, Map<String, byte[]> entries) {
        int start = log.position();
        int consumed = 0;
        while (log.hasRemaining()) {
            try {
                byte op = log.get();
                String key = new String(readChunk(log), StandardCharsets.UTF_8);
                switch (op) {
                    case OP_SET -> entries.put(key, readChunk(log));
                    case OP_DELETE -> entries.remove(key);
                    default -> throw new IllegalArgumentException("unknown record type " + op);
                }
            } catch (BufferUnderflowException e) {
                break;
            }
            consumed = log.position() - start;
        }
        return consumed;
    }

    private static byte[] readChunk(ByteBuffer log) {
        int length = log.getInt();
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        if (length > log.remaining()) {
            throw new BufferUnderflowException();
        }
        byte[] chunk = new byte[length];
        log.get(chunk);
        return chunk;
    }
}
