package dev.ferry.rpc.spi;

import dev.ferry.rpc.WorkerInfo;

/**
 * Describes one call to {@link CallInterceptor}s.
 *
 * @param caller   the worker that issued the call
 * @param callee   the worker that runs it
 * @param callId   the caller's id for the call, unique per caller
 * @param function a readable name of the function called, {@code Class::method}
 */
public record CallInfo(WorkerInfo caller, WorkerInfo callee, long callId, String function) {
}
