package dev.ferry.otel;

import dev.ferry.rpc.spi.CallInfo;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The spans of calls in flight in this JVM, from where they start (an interceptor, on the thread
 * that makes or runs the call) to where they end (an observer, told the outcome): the two are
 * separate services, so they meet here, by call. Named as OpenTelemetry's RPC conventions name
 * them ({@code rpc.system} {@code ferry}, {@code rpc.service} the class, {@code rpc.method} the
 * method). Thread-safe.
 */
final class CallSpans {
    static final String INSTRUMENTATION = "dev.ferry.rpc";
    private static final ConcurrentHashMap<Key, Span> OPEN = new ConcurrentHashMap<>();

    private CallSpans() {
    }

    /** A call's span on one of its ends: the caller's id of it is unique per caller. */
    private record Key(String caller, long callId, SpanKind kind) {
    }

    private static Tracer tracer() {
        return GlobalOpenTelemetry.getTracer(INSTRUMENTATION);
    }

    /**
     * At most this many spans wait for their calls' ends: a call whose arguments fail to encode
     * never ends (it is thrown to its caller before it is sent), so its span would stay here; past
     * the bound new spans still carry the trace context but are not recorded.
     */
    static final int MAX_OPEN = 65_536;

    /** Starts the span of {@code call} on its {@code kind} end, under {@code parent}. */
    static Span start(CallInfo call, SpanKind kind, Context parent) {
        String function = call.function();
        int colons = function.indexOf("::");
        SpanBuilder builder = tracer().spanBuilder(colons < 0 ? function
                        : function.substring(0, colons) + "/" + function.substring(colons + 2))
                .setSpanKind(kind)
                .setParent(parent)
                .setAttribute("rpc.system", "ferry")
                .setAttribute("ferry.caller", call.caller().name())
                .setAttribute("ferry.callee", call.callee().name())
                .setAttribute("ferry.call_id", call.callId());
        if (colons >= 0) {
            builder.setAttribute("rpc.service", function.substring(0, colons))
                    .setAttribute("rpc.method", function.substring(colons + 2));
        }
        Span span = builder.startSpan();
        if (OPEN.size() < MAX_OPEN) {
            OPEN.put(new Key(call.caller().name(), call.callId(), kind), span);
        }
        return span;
    }

    /** Ends the span of {@code call} on its {@code kind} end, if one was started, with its outcome. */
    static void end(CallInfo call, SpanKind kind, String outcome, long requestBytes, long responseBytes,
                    Throwable failure) {
        Span span = OPEN.remove(new Key(call.caller().name(), call.callId(), kind));
        if (span == null) {
            return;
        }
        span.setAttribute("ferry.outcome", outcome);
        span.setAttribute("ferry.request.size", requestBytes);
        span.setAttribute("ferry.response.size", responseBytes);
        if (failure != null) {
            span.recordException(failure);
            span.setStatus(StatusCode.ERROR, outcome);
        }
        span.end();
    }

    /** Spans started and not yet ended, for tests. */
    static int open() {
        return OPEN.size();
    }
}
