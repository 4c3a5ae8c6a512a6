package dev.ferry.rpc.internal.store;

import java.io.IOException;

/** A peer sent bytes that are not a valid store protocol frame; the connection must be dropped. */
public final class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
