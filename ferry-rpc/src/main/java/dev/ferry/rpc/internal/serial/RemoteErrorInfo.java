package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RemoteStackTrace;
import dev.ferry.rpc.RpcException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * A failure on the callee, in a form that needs none of its classes on the caller: the code (for
 * failures of Ferry itself on the callee), the exception's class name, message and frames, and its
 * cause chain.
 */
public record RemoteErrorInfo(String code, String className, String message, List<Frame> frames,
                              RemoteErrorInfo cause) {
    /** The most causes described; a decoder refuses more. */
    static final int MAX_CAUSES = 32;

    /**
     * Its texts made sound ({@link IntactText}), whether they come from this worker's exception
     * (whose message code here may have built corrupt; a peer's corrupt strings are refused as they
     * are decoded) or from a peer's answer: describing a failure, or reading one, never throws.
     */
    public RemoteErrorInfo {
        code = IntactText.of(code);
        className = IntactText.of(className);
        message = IntactText.of(message);
    }

    /** One stack frame. */
    public record Frame(String declaringClass, String methodName, String fileName, int lineNumber) {
        /** Its texts made sound, as {@link RemoteErrorInfo}'s. */
        public Frame {
            declaringClass = IntactText.of(declaringClass);
            methodName = IntactText.of(methodName);
            fileName = IntactText.of(fileName);
        }

        StackTraceElement toElement() {
            return new StackTraceElement(declaringClass, methodName, fileName, lineNumber);
        }
    }

    /** Describes {@code error} and its causes (cycles and very long chains cut). */
    public static RemoteErrorInfo of(Throwable error) {
        return of(error, Collections.newSetFromMap(new IdentityHashMap<>()), 0);
    }

    private static RemoteErrorInfo of(Throwable error, Set<Throwable> seen, int depth) {
        if (error == null || depth > MAX_CAUSES || !seen.add(error)) {
            return null;
        }
        String code = error instanceof RpcException rpc ? rpc.code().name() : RpcException.Code.REMOTE_ERROR.name();
        String className = error instanceof RemoteStackTrace remote ? remote.remoteClassName() : error.getClass().getName();
        List<Frame> frames = new ArrayList<>();
        for (StackTraceElement element : error.getStackTrace()) {
            frames.add(new Frame(element.getClassName(), element.getMethodName(), element.getFileName(),
                    element.getLineNumber()));
        }
        return new RemoteErrorInfo(code, className, error.getMessage(), frames, of(error.getCause(), seen, depth + 1));
    }

    /** The remote exception as a local carrier, with the callee's frames and causes. */
    public RemoteStackTrace toStackTrace() {
        StackTraceElement[] elements = new StackTraceElement[frames.size()];
        for (int i = 0; i < elements.length; i++) {
            elements[i] = frames.get(i).toElement();
        }
        return new RemoteStackTrace(className, message, elements, cause == null ? null : cause.toStackTrace());
    }

    /**
     * The exception the caller sees. A failure of user code is {@code REMOTE_ERROR}; a failure
     * Ferry detected on the callee (unknown function, undecodable arguments) keeps its own code.
     */
    public RpcException toException(String workerName) {
        RpcException.Code parsed = parseCode();
        if (parsed == RpcException.Code.REMOTE_ERROR || !className.equals(RpcException.class.getName())) {
            return RpcException.remote(workerName, className, message, toStackTrace());
        }
        return new RpcException(parsed, "On " + workerName + ": " + message, toStackTrace());
    }

    private RpcException.Code parseCode() {
        try {
            return RpcException.Code.valueOf(code);
        } catch (IllegalArgumentException | NullPointerException e) {
            return RpcException.Code.REMOTE_ERROR;
        }
    }
}
