package dev.ferry.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A Prometheus scrape endpoint, {@code GET /metrics}, serving a {@link PrometheusMeterRegistry} in
 * the text exposition format (version 0.0.4) from the JDK's HTTP server. Binds 127.0.0.1 unless
 * given another address: exposing metrics beyond the machine is a choice to make explicitly.
 *
 * <pre>{@code
 * try (PrometheusEndpoint endpoint = PrometheusEndpoint.start(registry, 9464)) {
 *     System.out.println("metrics at " + endpoint.uri());   // http://127.0.0.1:9464/metrics
 *     ...
 * }
 * }</pre>
 *
 * <p>One thread serves the requests, one at a time (a scrape renders the registry, which is quick).
 * Other paths answer 404, other methods 405. Thread-safe; {@link #close()} stops the server.
 */
public final class PrometheusEndpoint implements AutoCloseable {
    /** The content type of the text exposition format. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final String PATH = "/metrics";

    private final HttpServer server;
    private final ExecutorService executor;

    private PrometheusEndpoint(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Serves {@code registry} on 127.0.0.1:{@code port} ({@code 0}: a free port). */
    public static PrometheusEndpoint start(PrometheusMeterRegistry registry, int port) {
        return start(registry, new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    /** Serves {@code registry} on {@code address}. */
    public static PrometheusEndpoint start(PrometheusMeterRegistry registry, InetSocketAddress address) {
        Objects.requireNonNull(registry, "registry");
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + address + ": " + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ferry-prometheus-" + server.getAddress().getPort());
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.createContext("/", exchange -> serve(exchange, registry));
        server.start();
        return new PrometheusEndpoint(server, executor);
    }

    private static void serve(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
        try (exchange) {
            if (!exchange.getRequestURI().getPath().equals(PATH)) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            boolean head = exchange.getRequestMethod().equals("HEAD");
            exchange.sendResponseHeaders(200, head ? -1 : body.length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    /** The port it listens on. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** The scrape URL, {@code http://host:port/metrics}. */
    public URI uri() {
        InetSocketAddress address = server.getAddress();
        String host = address.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort() + PATH);
    }

    /** Stops serving. */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
