package dev.ferry.rpc.spi;

/**
 * Sees every call at the four points where its values cross the wire, and may attach per-call
 * context to the message header. Distributed autograd is built on this: before a request is sent
 * it finds the tensors that require grad and records a send function, puts the autograd context id
 * in the header; when the request arrives it records the matching receive function.
 *
 * <pre>
 *   caller                                        callee
 *   beforeSendRequest(args) -> headers  ──CALL──▶  afterReceiveRequest(args, headers) -> args
 *                                                  onHandlerStart(headers) ... handler runs ... scope.close()
 *   afterReceiveResponse(result, headers)◀──REPLY── beforeSendResponse(result, requestHeaders) -> headers
 * </pre>
 *
 * <p>Interceptors are registered in the backend options or found by {@link java.util.ServiceLoader}.
 * They run on the thread that sends or receives, must be thread-safe, and should be quick. An
 * exception thrown by an interceptor fails that call only.
 */
public interface CallInterceptor {

    /** Caller side, before the arguments are encoded. Returns the headers to send. */
    default CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
        return headers;
    }

    /** Callee side, after the arguments are decoded. Returns the arguments the function gets. */
    default Object[] afterReceiveRequest(CallInfo call, Object[] args, CallHeaders headers) {
        return args;
    }

    /**
     * Callee side, around the function: called on the thread that runs it, right before; the
     * returned scope is closed when the function returns (for an asynchronous function, when it has
     * returned its future).
     */
    default Scope onHandlerStart(CallInfo call, CallHeaders headers) {
        return Scope.NOOP;
    }

    /** Callee side, before the result is encoded. Returns the headers of the response. */
    default CallHeaders beforeSendResponse(CallInfo call, Object result, CallHeaders requestHeaders,
                                           CallHeaders responseHeaders) {
        return responseHeaders;
    }

    /** Caller side, after the result is decoded. Returns the value the caller's future gets. */
    default Object afterReceiveResponse(CallInfo call, Object result, CallHeaders responseHeaders) {
        return result;
    }

    /** A region opened by {@link #onHandlerStart}; closing it must not throw. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        Scope NOOP = () -> { };

        @Override
        void close();
    }
}
