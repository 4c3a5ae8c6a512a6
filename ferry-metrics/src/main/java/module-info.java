/**
 * Ferry's metrics for Micrometer ({@code dev.ferry.metrics}): an agent's calls, latencies and debug
 * info as meters, and a Prometheus scrape endpoint on the JDK's HTTP server. Its other classes are
 * package-private; nothing else is exported.
 */
// Micrometer's jars are automatic modules (named in their manifests); its types are in this
// module's API (MeterBinder, MeterRegistry, PrometheusMeterRegistry), so a user reads them through it.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.ferry.metrics {
    requires transitive dev.ferry.rpc;
    requires transitive micrometer.core;
    requires transitive micrometer.registry.prometheus;
    requires jdk.httpserver;

    exports dev.ferry.metrics;
}
