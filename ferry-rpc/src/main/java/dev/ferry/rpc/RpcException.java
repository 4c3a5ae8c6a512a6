package dev.ferry.rpc;

import java.io.Serial;
import java.util.Objects;

/**
 * The one exception type of Ferry's RPC layer. Every failure carries a {@link Code} that says what
 * kind of failure it is, so callers branch on {@link #code()} rather than on message text.
 *
 * <p>A failure of user code on the callee arrives as {@link Code#REMOTE_ERROR}: {@link
 * #remoteClassName()}, {@link #remoteMessage()} and {@link #workerName()} describe the exception
 * thrown there, and its stack trace (the callee's frames) is attached as the cause, a {@link
 * RemoteStackTrace}, so nothing of the remote failure is lost.
 *
 * <pre>{@code
 * try {
 *     agent.rpcSync("worker1", Ops::divide, 1, 0);
 * } catch (RpcException e) {
 *     if (e.code() == RpcException.Code.REMOTE_ERROR) {
 *         log.warn("{} failed on {}: {}", e.remoteClassName(), e.workerName(), e.remoteMessage());
 *     }
 * }
 * }</pre>
 */
public class RpcException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** What kind of failure an {@link RpcException} reports. */
    public enum Code {
        /** A call did not complete within its timeout. */
        TIMEOUT,
        /** The destination worker is unreachable, or its connection broke. */
        UNAVAILABLE,
        /** User code on the callee threw; see {@link RpcException#remoteClassName()}. */
        REMOTE_ERROR,
        /**
         * The local agent is not initialized yet, or is already shut down or shutting down; or a
         * gather or barrier cannot complete because one of its members began shutdown without
         * taking part in it.
         */
        SHUTDOWN,
        /** The agent is not initialized, or {@code initRpc} was called twice. */
        NOT_INITIALIZED,
        /** Bad arguments or configuration given to a Ferry API (names, ranks, options). */
        INVALID_ARGUMENT,
        /** Rendezvous did not complete: a rank missing, a duplicate name or rank. */
        RENDEZVOUS_FAILED,
        /** A value could not be encoded or decoded (unknown or disallowed class, bad frame). */
        SERIALIZATION_ERROR,
        /** The peer violated the wire protocol (bad frame, oversized message, unknown type). */
        PROTOCOL_ERROR,
        /** The function named by a call cannot be resolved or is not allowed on the callee. */
        UNKNOWN_FUNCTION,
        /** A remote reference is unknown to its owner, or used where it is not valid. */
        UNKNOWN_RREF,
        /**
         * An operation used in a state where it cannot work: completing a future twice, or
         * blocking on a future from a transport thread (which would deadlock that thread).
         */
        ILLEGAL_STATE,
        /** A failure inside Ferry itself. */
        INTERNAL,
        /**
         * A connection's peer did not prove it holds the group's authentication token (wrong or
         * missing token, or something that is not a Ferry worker), or did not within the time allowed.
         */
        UNAUTHENTICATED,
        /**
         * The call was cancelled: its future's {@code cancel} was called, or the call it was made
         * for (a handler's nested call) was cancelled. The callee was told to stop the work: a
         * request not started yet never runs, a running handler's thread is interrupted, and the
         * nested calls it waits on are cancelled in turn.
         */
        CANCELLED
    }

    private final Code code;
    private final String workerName;
    private final String remoteClassName;
    private final String remoteMessage;

    public RpcException(Code code, String message) {
        this(code, message, null);
    }

    public RpcException(Code code, String message, Throwable cause) {
        this(code, message, cause, null, null, null);
    }

    private RpcException(Code code, String message, Throwable cause, String workerName,
                         String remoteClassName, String remoteMessage) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
        this.workerName = workerName;
        this.remoteClassName = remoteClassName;
        this.remoteMessage = remoteMessage;
    }

    /**
     * The failure of user code on {@code workerName}, rebuilt on the caller.
     *
     * @param remoteStack the callee's exception with its frames, chained to its own causes
     */
    public static RpcException remote(String workerName, String remoteClassName, String remoteMessage,
                                      RemoteStackTrace remoteStack) {
        String message = "On " + workerName + ": " + remoteClassName
                + (remoteMessage == null ? "" : ": " + remoteMessage);
        return new RpcException(Code.REMOTE_ERROR, message, remoteStack, workerName, remoteClassName, remoteMessage);
    }

    public Code code() {
        return code;
    }

    /** The worker where the failure happened, for {@link Code#REMOTE_ERROR}; otherwise null. */
    public String workerName() {
        return workerName;
    }

    /** The class name of the exception thrown on the callee, for {@link Code#REMOTE_ERROR}. */
    public String remoteClassName() {
        return remoteClassName;
    }

    /** The message of the exception thrown on the callee, for {@link Code#REMOTE_ERROR}. */
    public String remoteMessage() {
        return remoteMessage;
    }

    /** A copy of this exception thrown again at a new place (the waiter's), keeping code and cause. */
    public RpcException rethrowable() {
        RpcException copy = new RpcException(code, getMessage(), this, workerName, remoteClassName, remoteMessage);
        return copy;
    }

    @Override
    public String toString() {
        return "RpcException[" + code + "]: " + getMessage();
    }
}
