package dev.ferry.rpc.spi;

import dev.ferry.rpc.RpcException;

/**
 * How one call went, as its caller saw it ({@link CallObserver#callEnded}). Times are
 * {@link System#nanoTime()} readings of the caller's JVM:
 *
 * <pre>
 *   startNanos      the call was made (rpcSync, rpcAsync, remote)
 *   encodedNanos    its arguments were encoded, the request handed to the transport
 *   answeredNanos   its answer was read (equals endNanos when it ended without one: timeout, lost peer)
 *   endNanos        its outcome was known: the answer decoded, or the failure
 * </pre>
 *
 * @param info          the call
 * @param headers       the request's header entries as sent
 * @param startNanos    when the call was made
 * @param encodedNanos  when its request was encoded
 * @param answeredNanos when its answer arrived
 * @param endNanos      when it ended
 * @param requestBytes  the encoded request (arguments, in band and out of band)
 * @param responseBytes the encoded answer; 0 when none came
 * @param failure       why it failed, or null if it succeeded
 */
public record CallTimeline(CallInfo info, CallHeaders headers, long startNanos, long encodedNanos,
                           long answeredNanos, long endNanos, long requestBytes, long responseBytes,
                           Throwable failure) {

    /** From the call to its outcome. */
    public long totalNanos() {
        return endNanos - startNanos;
    }

    /** Encoding the arguments. */
    public long serializeNanos() {
        return encodedNanos - startNanos;
    }

    /** From the request's hand-off to the answer's arrival: the network and the callee. */
    public long awaitNanos() {
        return answeredNanos - encodedNanos;
    }

    /** Decoding the answer. */
    public long deserializeNanos() {
        return endNanos - answeredNanos;
    }

    /** Whether the call returned a value. */
    public boolean succeeded() {
        return failure == null;
    }

    /** {@code "ok"}, the {@link RpcException.Code} of an {@link RpcException}, else the failure's class. */
    public String outcome() {
        return failure == null ? "ok" : dev.ferry.rpc.internal.observe.CallEvents.outcome(failure);
    }
}
