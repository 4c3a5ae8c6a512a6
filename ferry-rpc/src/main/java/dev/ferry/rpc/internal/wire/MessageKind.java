package dev.ferry.rpc.internal.wire;

/** The kinds of messages on a Ferry connection; the byte values are part of the wire format. */
public enum MessageKind {
    /** First message on a connection: who is calling, and from which world. */
    HELLO(1),
    /** A request to run a function; answered by REPLY or ERROR with the same id. */
    CALL(2),
    /** The result of a CALL. */
    REPLY(3),
    /** The failure of a CALL. */
    ERROR(4);

    private static final MessageKind[] BY_CODE = new MessageKind[5];

    static {
        for (MessageKind kind : values()) {
            BY_CODE[kind.code] = kind;
        }
    }

    private final int code;

    MessageKind(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The kind with this code, or null if there is none. */
    public static MessageKind of(int code) {
        return code > 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
