package dev.ferry.rpc.spi;

import dev.ferry.rpc.WorkerInfo;

/**
 * Learns how each of the application's calls went, with its timeline: where the time went on the
 * caller ({@link CallTimeline}) and on the callee ({@link RequestTimeline}). Metrics, the RPC
 * profiler, tracing bridges and the status page are built on this; grpc's stream tracers play the
 * same part there.
 *
 * <pre>
 *   caller                                           callee
 *   followsCall(info, headers)?                      followsRequest(caller, headers)?  (as it arrives)
 *   encode ─CALL──────────────────────────────────▶  queue, decode, run, encode
 *                                                    requestEnded(timeline)            (before the answer leaves)
 *   decode ◀─REPLY/ERROR─────────────────────────────
 *   callEnded(timeline)                              (before the caller's future completes)
 * </pre>
 *
 * <p>Each call is offered to every observer once, when it starts; only those that answer true see
 * its end, and a call no observer follows costs nothing more (no clock reads, no allocation). So an
 * observer that follows only some calls (those carrying its header, say) should answer quickly.
 * Ferry's own calls (RRef protocol, gathers, shutdown) are not offered.
 *
 * <pre>{@code
 * AutoCloseable registration = agent.addCallObserver(new CallObserver() {
 *     public boolean followsCall(CallInfo call, CallHeaders headers) { return true; }
 *     public void callEnded(CallTimeline call) {
 *         log.info("{} took {} us ({})", call.info().function(), call.totalNanos() / 1000, call.outcome());
 *     }
 * });
 * }</pre>
 *
 * <p>Observers are added to a running agent ({@code RpcAgent.addCallObserver}) or found by
 * {@link java.util.ServiceLoader} when the agent starts. Their methods run on the threads that make,
 * answer or run calls (transport threads among them): they must be thread-safe, quick, and must never
 * block. An exception an observer throws is logged and does not affect the call.
 */
public interface CallObserver {

    /**
     * Caller side, as a call is made, after the {@link CallInterceptor}s gave its headers: whether
     * to learn how it ends ({@link #callEnded}).
     */
    default boolean followsCall(CallInfo call, CallHeaders headers) {
        return false;
    }

    /** Caller side: a followed call ended (answered, failed remotely, timed out, lost). */
    default void callEnded(CallTimeline call) {
    }

    /**
     * Callee side, as a request arrives (before it is decoded, so its function is not known yet):
     * whether to learn how it ends ({@link #requestEnded}).
     */
    default boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
        return false;
    }

    /**
     * Callee side: a followed request ended, its answer (or error) encoded and about to be sent.
     * Called before the answer leaves, so when the caller has it, its callee's observers have run.
     */
    default void requestEnded(RequestTimeline request) {
    }
}
