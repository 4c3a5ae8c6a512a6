package dev.ferry.rpc.internal.store;

/**
 * The wire protocol between {@code TcpStore} clients and the {@code TcpStoreServer}.
 *
 * <p>Every message in either direction is one frame. All integers are big-endian.
 * <pre>
 * +------------------+-----------------+------------------+----------------------------+
 * | length (int32)   | id (int32)      | type (int8)      | body (length - 5 bytes)    |
 * +------------------+-----------------+------------------+----------------------------+
 *   bytes after this   request id; the   opcode in a request,
 *   field, 5..64 MiB   reply repeats it  status in a reply
 * </pre>
 * Inside bodies, {@code str} is {@code int32 n} + n bytes of UTF-8, {@code bytes} is {@code int32 n}
 * + n raw bytes, {@code keys} is {@code int32 count} + count {@code str}, {@code bool} is one byte
 * (0 or 1), {@code millis} is an {@code int64} timeout where 0 means "no timeout".
 *
 * <p>Requests (client to server):
 * <pre>
 * | op | name        | request body                  | OK reply body | other replies     |
 * |----|-------------|-------------------------------|---------------|-------------------|
 * |  0 | HELLO       | int32 magic "FRST", int16 ver | int16 version | (connection shut) |
 * |  1 | SET         | str key, bytes value          | (empty)       |                   |
 * |  2 | GET         | millis, str key               | bytes value   | TIMEOUT           |
 * |  3 | ADD         | str key, int64 delta          | int64 new     | ERROR             |
 * |  4 | COMPARE_SET | str key, bytes exp, bytes des | bytes current |                   |
 * |  5 | WAIT        | millis, keys                  | (empty)       | TIMEOUT           |
 * |  6 | CHECK       | keys                          | bool          |                   |
 * |  7 | DELETE      | str key                       | bool existed  |                   |
 * |  8 | NUM_KEYS    | (empty)                       | int64 count   |                   |
 * |  9 | CANCEL      | int32 id of a parked GET/WAIT | (no reply)    |                   |
 * </pre>
 * Reply statuses: {@code 0 OK} (body as above), {@code 1 TIMEOUT} (body: {@code keys}, those still
 * missing at the deadline), {@code 2 ERROR} (body: {@code str code}, an {@code RpcException.Code}
 * name, then {@code str message}). Any request may get an ERROR, e.g. SHUTDOWN when the server
 * closes while a GET is parked.
 *
 * <p>CANCEL releases a parked GET or WAIT the client no longer waits for (its caller was
 * interrupted or gave up); the cancelled request gets no reply, and cancelling an unknown or
 * finished id does nothing.
 *
 * <p>A connection starts with HELLO (id 0). Requests are multiplexed: a client may send new
 * requests while earlier ones (a parked GET) are pending, and replies come back in any order,
 * matched by id. A malformed frame, an unknown opcode or a length outside 5..64 MiB makes the server
 * close that one connection; it never affects other connections.
 */
public final class StoreProtocol {
    private StoreProtocol() {
    }

    /** "FRST": Ferry store. */
    public static final int MAGIC = 0x46525354;
    public static final short VERSION = 1;
    /** The largest frame either side accepts; larger values do not belong in a rendezvous store. */
    public static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;
    /**
     * The largest first frame (HELLO: id, type, magic, version) the server reads before a client has
     * introduced itself, and authenticated when there is a token: a stranger's claims cost nothing.
     */
    public static final int MAX_HELLO_BYTES = 64;
    /** id + type. */
    public static final int HEADER_BYTES = 5;

    public static final byte OP_HELLO = 0;
    public static final byte OP_SET = 1;
    public static final byte OP_GET = 2;
    public static final byte OP_ADD = 3;
    public static final byte OP_COMPARE_SET = 4;
    public static final byte OP_WAIT = 5;
    public static final byte OP_CHECK = 6;
    public static final byte OP_DELETE = 7;
    public static final byte OP_NUM_KEYS = 8;
    public static final byte OP_CANCEL = 9;

    public static final byte STATUS_OK = 0;
    public static final byte STATUS_TIMEOUT = 1;
    public static final byte STATUS_ERROR = 2;
}
