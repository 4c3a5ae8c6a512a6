package dev.ferry.rpc.internal.store;

import static dev.ferry.rpc.internal.store.StoreProtocol.OP_ADD;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_CANCEL;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_CHECK;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_COMPARE_SET;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_DELETE;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_GET;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_NUM_KEYS;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_SET;
import static dev.ferry.rpc.internal.store.StoreProtocol.OP_WAIT;

import java.util.List;

/**
 * A request of the {@linkplain StoreProtocol store protocol}, as an immutable value. {@link
 * #encode(int)} and {@link #decode(Frame)} are exact inverses; the codec is tested without sockets.
 */
public sealed interface StoreRequest {

    /** The opcode of this request. */
    byte op();

    /** Whether the server may park this request until keys appear. */
    default boolean blocking() {
        return false;
    }

    /** The request as a complete frame with the given id. */
    byte[] encode(int id);

    /** A short description for logs and error messages. */
    String describe();

    record Set(String key, byte[] value) implements StoreRequest {
        public byte op() {
            return OP_SET;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_SET).putString(key).putBytes(value).toByteArray();
        }

        public String describe() {
            return "SET " + key;
        }
    }

    record Get(String key, long timeoutMillis) implements StoreRequest {
        public byte op() {
            return OP_GET;
        }

        public boolean blocking() {
            return true;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_GET).putLong(timeoutMillis).putString(key).toByteArray();
        }

        public String describe() {
            return "GET " + key;
        }
    }

    record Add(String key, long delta) implements StoreRequest {
        public byte op() {
            return OP_ADD;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_ADD).putString(key).putLong(delta).toByteArray();
        }

        public String describe() {
            return "ADD " + key;
        }
    }

    record CompareSet(String key, byte[] expected, byte[] desired) implements StoreRequest {
        public byte op() {
            return OP_COMPARE_SET;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_COMPARE_SET).putString(key).putBytes(expected).putBytes(desired)
                    .toByteArray();
        }

        public String describe() {
            return "COMPARE_SET " + key;
        }
    }

    record Wait(List<String> keys, long timeoutMillis) implements StoreRequest {
        public byte op() {
            return OP_WAIT;
        }

        public boolean blocking() {
            return true;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_WAIT).putLong(timeoutMillis).putStrings(keys).toByteArray();
        }

        public String describe() {
            return "WAIT " + keys;
        }
    }

    record Check(List<String> keys) implements StoreRequest {
        public byte op() {
            return OP_CHECK;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_CHECK).putStrings(keys).toByteArray();
        }

        public String describe() {
            return "CHECK " + keys;
        }
    }

    record Delete(String key) implements StoreRequest {
        public byte op() {
            return OP_DELETE;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_DELETE).putString(key).toByteArray();
        }

        public String describe() {
            return "DELETE " + key;
        }
    }

    record NumKeys() implements StoreRequest {
        public byte op() {
            return OP_NUM_KEYS;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_NUM_KEYS).toByteArray();
        }

        public String describe() {
            return "NUM_KEYS";
        }
    }

    /** Releases the parked request {@code target}; the server sends no reply. */
    record Cancel(int target) implements StoreRequest {
        public byte op() {
            return OP_CANCEL;
        }

        public byte[] encode(int id) {
            return FrameBuilder.start(id, OP_CANCEL).putInt(target).toByteArray();
        }

        public String describe() {
            return "CANCEL #" + target;
        }
    }

    /**
     * Parses a request frame.
     *
     * @throws ProtocolException for an unknown opcode, a malformed body or a negative timeout
     */
    static StoreRequest decode(Frame frame) throws ProtocolException {
        FrameReader in = frame.body();
        StoreRequest request = switch (frame.type()) {
            case OP_SET -> new Set(in.readString(), in.readBytes());
            case OP_GET -> {
                long timeout = readTimeout(in);
                yield new Get(in.readString(), timeout);
            }
            case OP_ADD -> new Add(in.readString(), in.readLong());
            case OP_COMPARE_SET -> new CompareSet(in.readString(), in.readBytes(), in.readBytes());
            case OP_WAIT -> {
                long timeout = readTimeout(in);
                yield new Wait(in.readStrings(), timeout);
            }
            case OP_CHECK -> new Check(in.readStrings());
            case OP_DELETE -> new Delete(in.readString());
            case OP_NUM_KEYS -> new NumKeys();
            case OP_CANCEL -> new Cancel(in.readInt());
            default -> throw new ProtocolException("unknown store opcode " + frame.type());
        };
        in.expectEnd();
        return request;
    }

    private static long readTimeout(FrameReader in) throws ProtocolException {
        long millis = in.readLong();
        if (millis < 0) {
            throw new ProtocolException("negative timeout " + millis + " ms");
        }
        return millis;
    }
}
