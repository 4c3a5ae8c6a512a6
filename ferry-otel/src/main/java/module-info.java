/**
 * OpenTelemetry spans for Ferry's calls, the trace context carried in their headers: the RPC core
 * finds its interceptor and observer as services. The package {@code dev.ferry.otel} holds only
 * those two public classes; their helpers are package-private.
 */
// OpenTelemetry's API jars are automatic modules (named in their manifests).
@SuppressWarnings("requires-automatic")
module dev.ferry.otel {
    requires transitive dev.ferry.rpc;
    requires io.opentelemetry.api;
    requires io.opentelemetry.context;

    exports dev.ferry.otel;

    provides dev.ferry.rpc.spi.CallInterceptor with dev.ferry.otel.TracingInterceptor;
    provides dev.ferry.rpc.spi.CallObserver with dev.ferry.otel.TracingObserver;
}
