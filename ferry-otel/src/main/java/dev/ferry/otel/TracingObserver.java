package dev.ferry.otel;

import dev.ferry.rpc.WorkerInfo;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallObserver;
import dev.ferry.rpc.spi.CallTimeline;
import dev.ferry.rpc.spi.RequestTimeline;
import io.opentelemetry.api.trace.SpanKind;

/**
 * Ends the spans {@link TracingInterceptor} started, when their calls end: the caller's when its
 * outcome is known, the callee's when its answer is encoded (an {@code @AsyncExecution} function's
 * when its future completed), each with the outcome, the sizes and, on a failure, the error.
 * Follows only calls carrying a trace context. Installed by {@link java.util.ServiceLoader}.
 */
public final class TracingObserver implements CallObserver {

    /** Public for {@link java.util.ServiceLoader}. */
    public TracingObserver() {
    }

    @Override
    public boolean followsCall(CallInfo call, CallHeaders headers) {
        return TraceHeaders.traced(headers);
    }

    @Override
    public void callEnded(CallTimeline call) {
        CallSpans.end(call.info(), SpanKind.CLIENT, call.outcome(), call.requestBytes(), call.responseBytes(),
                call.failure());
    }

    @Override
    public boolean followsRequest(WorkerInfo caller, CallHeaders headers) {
        return TraceHeaders.traced(headers);
    }

    @Override
    public void requestEnded(RequestTimeline request) {
        CallSpans.end(request.info(), SpanKind.SERVER, request.outcome(), request.requestBytes(),
                request.responseBytes(), request.failure());
    }
}
