/**
 * Ferry's metrics for Micrometer: {@link dev.ferry.metrics.RpcAgentMetrics} binds an agent's calls,
 * latencies and debug info to any {@code MeterRegistry}, and {@link dev.ferry.metrics.PrometheusEndpoint}
 * serves a Prometheus registry for scraping. Optional: {@code ferry-rpc} does not depend on Micrometer.
 */
package dev.ferry.metrics;
