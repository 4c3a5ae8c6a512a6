package dev.ferry.rpc.internal.observe;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.WorkerInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Reports an agent's state to a status page ({@code RpcBackendOptions.statusUrl}) every
 * {@value #PERIOD_MILLIS} ms while calls end or points are reported, else every
 * {@value #IDLE_PERIOD_MILLIS} ms: a POST of a JSON snapshot, from a daemon thread of its own, so a slow
 * or absent page never holds up the agent (a report that fails is logged once and dropped; the next
 * one tries again). The last report, at close, says the agent shut down.
 *
 * <p>Reports go through {@link HttpURLConnection} (which keeps the connection alive between them),
 * not {@code java.net.http.HttpClient}: building an {@code HttpClient} initializes TLS
 * ({@code SSLContext.getDefault()}) even for a plain {@code http://} page, 0.25–0.55 s of CPU in a
 * cold JVM, on every worker {@code ferry run} starts; a first POST through {@code HttpURLConnection}
 * costs ~0.1 s (ferry-bench/results/2026-12-03-demo).
 *
 * <pre>
 *   {"worker":"worker0","rank":0,"worldSize":3,"host":"node1","pid":4242,"state":"RUNNING","timeMs":...,
 *    "inFlight":2,"activeRequests":1,"queued":0,"rrefsOwned":3,"rrefForks":1,
 *    "peers":{"worker1":{"sent":120,"failed":0,"received":118,"requestsFailed":0,"windowCalls":40,
 *                        "p50Us":85.3,"p90Us":140.0,"p99Us":310.2}},
 *    "errors":[{"timeMs":...,"side":"call","peer":"worker2","function":"Ops::f","type":"java.lang.IllegalStateException",
 *               "worker":"worker2","message":"..."}],
 *    "series":{"loss":[[0,2.31],[1,2.05]]}}
 * </pre>
 *
 * <p>Thread-safe; {@link #close()} stops the thread.
 */
public final class StatusPublisher implements AutoCloseable {
    static final long PERIOD_MILLIS = 500;
    /**
     * How often a worker with no call ended and no point reported since its last report reports
     * anyway, to show it is alive: within the page's 5 s before it calls a worker unresponsive.
     */
    static final long IDLE_PERIOD_MILLIS = 2_000;
    private static final int CONNECT_TIMEOUT_MILLIS = 2_000;
    private static final int READ_TIMEOUT_MILLIS = 5_000;
    private static final int MAX_ANSWER_BYTES = 64 * 1024;
    private static final Logger log = LoggerFactory.getLogger(StatusPublisher.class);

    private final RpcAgent agent;
    private final URI url;
    private final String authToken;
    private final ReportedSeries series;
    private final PeerStats peers = new PeerStats();
    private final AutoCloseable observer;
    private final URL target;
    private final Thread thread;
    private volatile boolean running = true;
    private boolean failing;
    private String host = "localhost";

    private StatusPublisher(RpcAgent agent, URI url, String authToken, ReportedSeries series) {
        this.agent = agent;
        this.url = url;
        this.authToken = authToken;
        this.series = series;
        this.observer = agent.addCallObserver(peers);
        try {
            this.target = url.toURL();
        } catch (java.net.MalformedURLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("not a status page URL: " + url, e);
        }
        this.thread = Thread.ofPlatform().daemon().name("ferry-status-" + agent.getWorkerInfo().name())
                .unstarted(this::run);
    }

    /** Starts reporting {@code agent}'s state to {@code url}. */
    public static StatusPublisher start(RpcAgent agent, String url, String authToken, ReportedSeries series) {
        StatusPublisher publisher = new StatusPublisher(agent, URI.create(url), authToken, series);
        publisher.thread.start();
        return publisher;
    }

    private void run() {
        try {
            host = InetAddress.getLocalHost().getHostName(); // may ask DNS: on this thread, not the agent's
        } catch (Exception e) {
            log.debug("no host name: {}", e.toString());
        }
        long reportedActivity = -1;
        long reportedAt = 0;
        while (running) {
            // An idle worker reports less often: the same counters again say only that it is alive.
            long activity = peers.ended() + series.reports();
            long now = System.nanoTime();
            if (activity != reportedActivity || now - reportedAt >= TimeUnit.MILLISECONDS.toNanos(IDLE_PERIOD_MILLIS)) {
                publish(snapshot(agent.getDebugInfo()));
                reportedActivity = activity;
                reportedAt = now;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS));
        }
    }

    private void publish(String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        HttpURLConnection connection = null;
        try {
            connection = (HttpURLConnection) target.openConnection();
            connection.setConnectTimeout(CONNECT_TIMEOUT_MILLIS);
            connection.setReadTimeout(READ_TIMEOUT_MILLIS);
            connection.setRequestMethod("POST");
            connection.setDoOutput(true);
            connection.setFixedLengthStreamingMode(body.length);
            connection.setRequestProperty("Content-Type", "application/json");
            if (authToken != null) {
                connection.setRequestProperty("Authorization", "Bearer " + authToken);
            }
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body);
            }
            int status = connection.getResponseCode();
            // A short answer read to its end lets the connection go back to the JDK's keep-alive
            // cache; a longer one (a page reports nothing back) is cut off with its connection.
            try (InputStream in = status / 100 == 2 ? connection.getInputStream() : connection.getErrorStream()) {
                if (in != null && in.readNBytes(MAX_ANSWER_BYTES).length == MAX_ANSWER_BYTES && in.read() >= 0) {
                    connection.disconnect();
                }
            }
            if (status / 100 != 2) {
                throw new IOException("HTTP " + status);
            }
            failing = false;
        } catch (Exception e) {
            if (connection != null) {
                connection.disconnect();
            }
            if (!failing) {
                log.warn("{}: cannot report to the status page at {}: {}", agent.getWorkerInfo().name(), url, e.toString());
                failing = true;
            }
        }
    }

    /** The snapshot of the agent's state now (this closes the latency window). */
    String snapshot(Map<String, String> info) {
        WorkerInfo self = agent.getWorkerInfo();
        return "{\"worker\":" + JsonText.quote(self.name()) + ",\"rank\":" + self.id()
                + ",\"worldSize\":" + number(info, "agent.world_size")
                + ",\"host\":" + JsonText.quote(host) + ",\"pid\":" + ProcessHandle.current().pid()
                + ",\"state\":" + JsonText.quote(info.getOrDefault("agent.state", "?"))
                + ",\"timeMs\":" + System.currentTimeMillis()
                + ",\"inFlight\":" + number(info, "agent.client_active_user_calls")
                + ",\"activeRequests\":" + number(info, "agent.server_active_calls")
                + ",\"queued\":" + number(info, "agent.server_queued_requests")
                + ",\"rrefsOwned\":" + number(info, "rref.num_owner_rrefs")
                + ",\"rrefForks\":" + number(info, "rref.num_forks")
                + "," + peers.json()
                + ",\"series\":" + series.json() + "}";
    }

    private static String number(Map<String, String> info, String key) {
        String value = info.get(key);
        if (value == null) {
            return "0";
        }
        try {
            return JsonText.number(Double.parseDouble(value));
        } catch (NumberFormatException e) {
            return "0";
        }
    }

    /** Stops reporting, after a last report of the agent's state (shut down, as a rule). */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(3));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            observer.close();
        } catch (Exception e) {
            // removing an observer does not fail
        }
        publish(snapshot(agent.getDebugInfo()));
    }
}
