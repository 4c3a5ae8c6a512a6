package dev.ferry.status;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * A live status page of a running cluster, on the JDK's HTTP server: the workers report their state
 * to it ({@code POST /api/report/RANK}, what a Ferry agent with a {@code statusUrl} does twice a
 * second) and pages follow it live ({@code GET /api/events}, server-sent events), drawn with uPlot,
 * which the jar carries: nothing is fetched from the internet. The launcher ({@code ferry run})
 * starts one per group; so can any program that runs workers.
 *
 * <pre>
 *   GET  /                  the page
 *   GET  /assets/NAME       its script, styles and uPlot
 *   GET  /api/cluster       the launcher's view of the workers now (JSON)
 *   GET  /api/events        the live feed: "cluster" events, and "report" events (rank, then the report)
 *   POST /api/report/RANK   a worker's report (JSON, at most 1 MiB; "Authorization: Bearer TOKEN" when the
 *                           server has a token)
 * </pre>
 *
 * <pre>{@code
 * try (StatusServer status = StatusServer.start(0, token, 3, launcher::processes)) {
 *     System.err.println("status page at " + status.pageUri());
 *     env.put("FERRY_STATUS_URL", status.reportUrl(rank));   // for each worker
 *     ...
 * }
 * }</pre>
 *
 * <p>Safe by default: binds 127.0.0.1 unless given another address, takes reports only with the
 * group's token (compared in constant time) when it has one, bounds what it reads (a report's size,
 * {@value #MAX_PAGES} pages followed at once) and serves only the files it knows. Each request runs
 * on a virtual thread; a followed page holds one. Thread-safe; {@link #close()} stops it.
 */
public final class StatusServer implements AutoCloseable {
    static final int MAX_REPORT_BYTES = 1 << 20;
    static final int MAX_PAGES = 16;
    private static final Logger log = LoggerFactory.getLogger(StatusServer.class);
    private static final String ASSETS = "/dev/ferry/status/assets/";
    private static final Map<String, String> FILES = Map.of(
            "index.html", "text/html; charset=utf-8",
            "status.js", "text/javascript; charset=utf-8",
            "status.css", "text/css; charset=utf-8",
            "uPlot.iife.min.js", "text/javascript; charset=utf-8",
            "uPlot.min.css", "text/css; charset=utf-8",
            "uPlot.LICENSE", "text/plain; charset=utf-8");

    private final HttpServer server;
    private final ExecutorService executor;
    private final ClusterState cluster;
    private final byte[] token;
    private final Semaphore pages = new Semaphore(MAX_PAGES);
    private volatile boolean open = true;

    private StatusServer(HttpServer server, ExecutorService executor, ClusterState cluster, String token) {
        this.server = server;
        this.executor = executor;
        this.cluster = cluster;
        this.token = token == null ? null : ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Serves the page of {@code size} workers on 127.0.0.1:{@code port} ({@code 0}: a free port).
     *
     * @param token     the group's token reports must carry, or null to take them from anyone local
     * @param processes the launcher's view of the workers' processes, by rank, asked each time a page updates
     */
    public static StatusServer start(int port, String token, int size, Supplier<List<WorkerProcess>> processes) {
        return start(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), token, size, processes);
    }

    /** As {@link #start(int, String, int, Supplier)}, on {@code address}. */
    public static StatusServer start(InetSocketAddress address, String token, int size,
                                     Supplier<List<WorkerProcess>> processes) {
        Objects.requireNonNull(processes, "processes");
        if (size < 1) {
            throw new IllegalArgumentException("a cluster has at least one worker, not " + size);
        }
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve the status page on " + address + ": " + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("ferry-status-http").factory());
        server.setExecutor(executor);
        StatusServer status = new StatusServer(server, executor, new ClusterState(size, processes), token);
        server.createContext("/", status::handle);
        server.start();
        return status;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (path.startsWith("/api/report/")) {
                if (!method.equals("POST")) {
                    refuse(exchange, 405);
                    return;
                }
                takeReport(exchange, path.substring("/api/report/".length()));
                return;
            }
            if (!method.equals("GET")) {
                refuse(exchange, 405);
                return;
            }
            switch (path) {
                case "/", "/index.html" -> serveFile(exchange, "index.html");
                case "/api/cluster" -> send(exchange, 200, "application/json", cluster.json());
                case "/api/events" -> follow(exchange);
                default -> {
                    if (path.startsWith("/assets/") && FILES.containsKey(path.substring("/assets/".length()))) {
                        serveFile(exchange, path.substring("/assets/".length()));
                    } else {
                        refuse(exchange, 404);
                    }
                }
            }
        } catch (IOException e) {
            log.debug("status page request failed: {}", e.toString()); // a page that went away
        }
    }

    private void takeReport(HttpExchange exchange, String rankText) throws IOException {
        if (token != null && !MessageDigest.isEqual(token, String.valueOf(
                exchange.getRequestHeaders().getFirst("Authorization")).getBytes(StandardCharsets.UTF_8))) {
            refuse(exchange, 401);
            return;
        }
        int rank;
        try {
            rank = Integer.parseInt(rankText);
        } catch (NumberFormatException e) {
            rank = -1;
        }
        if (rank < 0 || rank >= cluster.size()) {
            refuse(exchange, 404);
            return;
        }
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readNBytes(MAX_REPORT_BYTES + 1);
        }
        if (body.length > MAX_REPORT_BYTES) {
            refuse(exchange, 413);
            return;
        }
        String json = new String(body, StandardCharsets.UTF_8).strip();
        if (!json.startsWith("{") || !json.endsWith("}")) {
            refuse(exchange, 400);
            return;
        }
        cluster.report(rank, json);
        exchange.sendResponseHeaders(204, -1);
    }

    private void follow(HttpExchange exchange) throws IOException {
        if (!pages.tryAcquire()) {
            refuse(exchange, 503);
            return;
        }
        try {
            EventStream.serve(exchange, cluster, () -> open);
        } finally {
            pages.release();
        }
    }

    private static void serveFile(HttpExchange exchange, String name) throws IOException {
        byte[] body;
        try (InputStream in = StatusServer.class.getResourceAsStream(ASSETS + name)) {
            if (in == null) {
                refuse(exchange, 404);
                return;
            }
            body = in.readAllBytes();
        }
        exchange.getResponseHeaders().set("Content-Type", FILES.get(name));
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static void send(HttpExchange exchange, int status, String type, String text) throws IOException {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static void refuse(HttpExchange exchange, int status) throws IOException {
        exchange.sendResponseHeaders(status, -1);
    }

    /** The port it listens on. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** The page's address, {@code http://127.0.0.1:PORT/}. */
    public URI pageUri() {
        String host = server.getAddress().getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port() + "/");
    }

    /** Where worker {@code rank} reports: the value of its {@code FERRY_STATUS_URL}. */
    public String reportUrl(int rank) {
        return pageUri().resolve("api/report/" + rank).toString();
    }

    /** Stops serving; followed pages see their feed end. */
    @Override
    public void close() {
        open = false;
        server.stop(0);
        executor.shutdownNow();
    }
}
