/**
 * Traces Ferry calls with OpenTelemetry: drop {@code ferry-otel} on the class path of every worker
 * and a call made inside a span gets a {@code CLIENT} span, its callee a {@code SERVER} span, and
 * the calls the callee makes join the same trace, the W3C trace context ({@code traceparent}) riding
 * in the message header. Spans go to the application's {@code GlobalOpenTelemetry} (its SDK and
 * exporters); with none installed they are no-ops, yet the context still travels through the
 * worker. Calls made outside any span carry nothing and cost a context look-up.
 *
 * <pre>{@code
 * Span root = GlobalOpenTelemetry.getTracer("train").spanBuilder("step").startSpan();
 * try (Scope scope = root.makeCurrent()) {
 *     Rpc.rpcSync("worker1", Model::forward, batch);   // worker1's nested calls join root's trace
 * } finally {
 *     root.end();
 * }
 * }</pre>
 */
package dev.ferry.otel;
