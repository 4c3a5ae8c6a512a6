package dev.ferry.status;

import com.sun.net.httpserver.HttpExchange;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * One page's live feed (server-sent events, {@code text/event-stream}): every {@value #PERIOD_MILLIS}
 * ms a {@code report} event per worker whose report is newer than the last this page got (its rank
 * on the first data line, the report after), then a {@code cluster} event with the launcher's view.
 * Runs on its own (virtual) thread until the page goes away or the server closes.
 */
final class EventStream {
    static final long PERIOD_MILLIS = 500;

    private EventStream() {
    }

    static void serve(HttpExchange exchange, ClusterState cluster, BooleanSupplier open) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(200, 0);
        long[] sent = new long[cluster.size()];
        try (OutputStream out = exchange.getResponseBody()) {
            out.write("retry: 1000\n\n".getBytes(StandardCharsets.UTF_8));
            while (open.getAsBoolean()) {
                StringBuilder events = new StringBuilder();
                for (int rank = 0; rank < sent.length; rank++) {
                    ClusterState.Report report = cluster.report(rank);
                    if (report != null && report.sequence() != sent[rank]) {
                        sent[rank] = report.sequence();
                        append(events, "report", rank + "\n" + report.json());
                    }
                }
                // Last: the page redraws on it, with the reports just sent.
                append(events, "cluster", cluster.json());
                out.write(events.toString().getBytes(StandardCharsets.UTF_8));
                out.flush(); // fails once the page has gone: that ends this stream
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS));
            }
        }
    }

    /** One event; each line of {@code data} its own {@code data:} field, as the format requires. */
    static void append(StringBuilder events, String name, String data) {
        events.append("event: ").append(name).append('\n');
        for (String line : data.split("\r\n|\r|\n", -1)) {
            events.append("data: ").append(line).append('\n');
        }
        events.append('\n');
    }
}
