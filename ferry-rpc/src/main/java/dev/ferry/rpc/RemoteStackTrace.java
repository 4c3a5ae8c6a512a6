package dev.ferry.rpc;

import java.io.Serial;

/**
 * Stands for an exception thrown on another worker: its class name, message and the remote
 * frames, with the remote cause chain as its own causes. The original class need not exist on the
 * caller, so it is never instantiated there; this carrier prints just like the original
 * ({@code toString()} gives the remote class name and message).
 */
public final class RemoteStackTrace extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String remoteClassName;

    public RemoteStackTrace(String remoteClassName, String message, StackTraceElement[] frames,
                            RemoteStackTrace cause) {
        super(message, cause, false, true);
        this.remoteClassName = remoteClassName;
        setStackTrace(frames);
    }

    /** The fully qualified class name of the remote exception. */
    public String remoteClassName() {
        return remoteClassName;
    }

    @Override
    public String toString() {
        String message = getLocalizedMessage();
        return message == null ? remoteClassName : remoteClassName + ": " + message;
    }
}
