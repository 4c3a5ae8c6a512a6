package dev.ferry.otel;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;

/**
 * Starts the spans of traced calls: on the caller, a {@code CLIENT} span under the span current on
 * the calling thread (a call made outside any span is not traced and its headers stay as they
 * were), whose context travels as {@code traceparent}; on the callee, a {@code SERVER} span under
 * the context that arrived, current while the function runs, so the calls it makes join the trace.
 * {@link TracingObserver} ends them. Installed by {@link java.util.ServiceLoader}.
 */
public final class TracingInterceptor implements CallInterceptor {

    /** Public for {@link java.util.ServiceLoader}. */
    public TracingInterceptor() {
    }

    @Override
    public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
        Context parent = Context.current();
        if (!Span.fromContext(parent).getSpanContext().isValid() || TraceHeaders.system(headers)) {
            return headers;
        }
        Span span = CallSpans.start(call, SpanKind.CLIENT, parent);
        return TraceHeaders.inject(parent.with(span), headers);
    }

    @Override
    public Scope onHandlerStart(CallInfo call, CallHeaders headers) {
        if (!TraceHeaders.traced(headers)) {
            return Scope.NOOP;
        }
        Context parent = TraceHeaders.extract(headers);
        Span span = CallSpans.start(call, SpanKind.SERVER, parent);
        io.opentelemetry.context.Scope current = parent.with(span).makeCurrent();
        return current::close;
    }
}
