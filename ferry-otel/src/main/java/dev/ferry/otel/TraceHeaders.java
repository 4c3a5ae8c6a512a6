package dev.ferry.otel;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.HeaderKey;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;

import java.util.List;

/**
 * The W3C trace context ({@code traceparent}, {@code tracestate}) in a call's header entries,
 * written and read by OpenTelemetry's own W3C propagator. Stateless.
 */
final class TraceHeaders {
    static final HeaderKey<String> TRACEPARENT = HeaderKey.ofString("traceparent");
    static final HeaderKey<String> TRACESTATE = HeaderKey.ofString("tracestate");
    /** The mark of Ferry's own calls (RRef protocol, gathers, shutdown), which are not traced. */
    private static final HeaderKey<String> SYSTEM = HeaderKey.ofString("ferry-system");
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    private TraceHeaders() {
    }

    /** {@code headers} with the trace context of {@code context}. */
    static CallHeaders inject(Context context, CallHeaders headers) {
        Holder holder = new Holder(headers);
        W3C.inject(context, holder, Holder.SETTER);
        return holder.headers;
    }

    /** The remote parent {@code headers} carry, in the current context. */
    static Context extract(CallHeaders headers) {
        return W3C.extract(Context.current(), headers, GETTER);
    }

    /** Whether a call with {@code headers} is traced: it carries a trace context and is the application's. */
    static boolean traced(CallHeaders headers) {
        return headers.contains(TRACEPARENT) && !headers.contains(SYSTEM);
    }

    /** Whether a call with {@code headers} is one of Ferry's own. */
    static boolean system(CallHeaders headers) {
        return headers.contains(SYSTEM);
    }

    private static final TextMapGetter<CallHeaders> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(CallHeaders carrier) {
            return List.of(TRACEPARENT.name(), TRACESTATE.name());
        }

        @Override
        public String get(CallHeaders carrier, String key) {
            if (carrier == null) {
                return null;
            }
            if (key.equals(TRACEPARENT.name())) {
                return carrier.get(TRACEPARENT);
            }
            return key.equals(TRACESTATE.name()) ? carrier.get(TRACESTATE) : null;
        }
    };

    /** Immutable headers, as a carrier the propagator writes to. */
    private static final class Holder {
        static final TextMapSetter<Holder> SETTER = (holder, key, value) -> {
            if (holder != null && key.equals(TRACEPARENT.name())) {
                holder.headers = holder.headers.with(TRACEPARENT, value);
            } else if (holder != null && key.equals(TRACESTATE.name())) {
                holder.headers = holder.headers.with(TRACESTATE, value);
            }
        };

        CallHeaders headers;

        Holder(CallHeaders headers) {
            this.headers = headers;
        }
    }
}
