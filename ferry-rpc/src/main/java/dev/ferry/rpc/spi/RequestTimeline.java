package dev.ferry.rpc.spi;

/**
 * How one request went on the worker that ran it ({@link CallObserver#requestEnded}). Times are
 * {@link System#nanoTime()} readings of the callee's JVM:
 *
 * <pre>
 *   arrivedNanos     the request was read from the connection
 *   startedNanos     a thread began to run it (the wait before: queueing)
 *   decodedNanos     its arguments were decoded
 *   handlerEndNanos  the function returned (an @AsyncExecution one: its future completed), or failed
 *   endNanos         the answer was encoded, about to be sent
 * </pre>
 *
 * @param info            the call; its function is {@code "?"} when the request could not be decoded
 * @param headers         the request's header entries as they arrived
 * @param arrivedNanos    when it arrived
 * @param startedNanos    when it started to run
 * @param decodedNanos    when its arguments were decoded
 * @param handlerEndNanos when its function ended
 * @param endNanos        when its answer was encoded
 * @param requestBytes    the encoded request
 * @param responseBytes   the encoded answer (or error)
 * @param asynchronous    an {@code @AsyncExecution} function, answered when its future completed
 * @param failure         what the function (or decoding) threw, or null if it returned
 */
public record RequestTimeline(CallInfo info, CallHeaders headers, long arrivedNanos, long startedNanos,
                              long decodedNanos, long handlerEndNanos, long endNanos, long requestBytes,
                              long responseBytes, boolean asynchronous, Throwable failure) {

    /** From arrival to the encoded answer. */
    public long totalNanos() {
        return endNanos - arrivedNanos;
    }

    /** Waiting for a thread to run it. */
    public long queueNanos() {
        return startedNanos - arrivedNanos;
    }

    /** Decoding the arguments. */
    public long deserializeNanos() {
        return decodedNanos - startedNanos;
    }

    /** Running the function. */
    public long handlerNanos() {
        return handlerEndNanos - decodedNanos;
    }

    /** Encoding the answer. */
    public long serializeNanos() {
        return endNanos - handlerEndNanos;
    }

    /** Whether the function returned a value. */
    public boolean succeeded() {
        return failure == null;
    }

    /** {@code "ok"}, the {@code RpcException.Code} of an {@code RpcException}, else the failure's class. */
    public String outcome() {
        return failure == null ? "ok" : dev.ferry.rpc.internal.observe.CallEvents.outcome(failure);
    }
}
