package dev.ferry.status;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** The status server over real HTTP: the page and its files, reports with their checks, the live feed. */
@Timeout(30)
class StatusServerTest {
    private static final String TOKEN = "a-token-of-the-group-0123456789";
    private final List<WorkerProcess> processes = new CopyOnWriteArrayList<>(List.of(
            new WorkerProcess(0, 100, 1, true, -1), new WorkerProcess(1, 101, 1, true, -1)));
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private StatusServer server;

    @BeforeEach
    void start() {
        server = StatusServer.start(0, TOKEN, 2, () -> processes);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(server.pageUri().resolve(path)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private int report(int rank, String body, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.reportUrl(rank)))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    @Test
    void servesThePageAndItsFilesFromTheJarOnLoopback() throws Exception {
        assertThat(server.pageUri().getHost()).isEqualTo("127.0.0.1");
        HttpResponse<String> page = get("/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
        assertThat(page.body()).contains("<title>Ferry cluster</title>", "/assets/uPlot.iife.min.js");
        // the launcher's count of a rank's processes; "Incarnation" would read as the agent's join number in the logs
        assertThat(page.body()).contains(">Starts</th>").doesNotContain("Incarnation");
        assertThat(get("/assets/uPlot.iife.min.js").body()).contains("uPlot");
        assertThat(get("/assets/status.js").statusCode()).isEqualTo(200);
        assertThat(get("/assets/../StatusServer.class").statusCode()).isEqualTo(404);
        assertThat(get("/elsewhere").statusCode()).isEqualTo(404);
    }

    @Test
    void takesReportsOnlyWithTheTokenAndWithinBounds() throws Exception {
        assertThat(report(0, "{\"worker\":\"worker0\"}", null)).isEqualTo(401);
        assertThat(report(0, "{\"worker\":\"worker0\"}", "another-token-0123456789")).isEqualTo(401);
        assertThat(report(2, "{\"worker\":\"worker2\"}", TOKEN)).isEqualTo(404);
        assertThat(report(0, "not json", TOKEN)).isEqualTo(400);
        assertThat(report(0, "{" + "x".repeat(StatusServer.MAX_REPORT_BYTES) + "}", TOKEN)).isEqualTo(413);
        assertThat(get("/api/cluster").body()).contains("\"reportAgeMs\":-1", "\"state\":\"starting\"");

        assertThat(report(0, "{\"worker\":\"worker0\"}", TOKEN)).isEqualTo(204);
        String cluster = get("/api/cluster").body();
        assertThat(cluster).contains("{\"rank\":0,\"pid\":100,\"incarnation\":1,\"exitCode\":-1,");
        assertThat(cluster.substring(cluster.indexOf("{\"rank\":0"), cluster.indexOf("{\"rank\":1")))
                .contains("\"state\":\"reporting\"");
    }

    @Test
    void anExitedProcessIsGoneWhateverItReported() throws Exception {
        assertThat(report(1, "{\"worker\":\"worker1\"}", TOKEN)).isEqualTo(204);
        processes.set(1, new WorkerProcess(1, 101, 1, false, 137));
        String cluster = get("/api/cluster").body();
        assertThat(cluster).contains("{\"rank\":1,\"pid\":101,\"incarnation\":1,\"exitCode\":137,")
                .endsWith("\"state\":\"gone\"}]}");
    }

    @Test
    void aRankStartedAgainIsStartingUntilItsNewProcessReports() throws Exception {
        assertThat(report(1, "{\"worker\":\"worker1\",\"pid\":101}", TOKEN)).isEqualTo(204);
        processes.set(1, new WorkerProcess(1, 102, 2, true, -1)); // killed, and the launcher started it again

        String cluster = get("/api/cluster").body();
        assertThat(cluster).contains("{\"rank\":1,\"pid\":102,\"incarnation\":2,\"exitCode\":-1,\"reportAgeMs\":-1,"
                + "\"state\":\"starting\"}");

        assertThat(report(1, "{\"worker\":\"worker1\",\"pid\":102}", TOKEN)).isEqualTo(204);
        assertThat(get("/api/cluster").body()).contains("{\"rank\":1,\"pid\":102,\"incarnation\":2,")
                .endsWith("\"state\":\"reporting\"}]}");
    }

    @Test
    void theLiveFeedSendsTheClusterThenEachNewReport() throws Exception {
        assertThat(report(1, "{\"worker\":\"worker1\",\n\"note\":\"two lines\"}", TOKEN)).isEqualTo(204);
        HttpResponse<InputStream> feed = client.send(HttpRequest.newBuilder(server.pageUri().resolve("/api/events"))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(feed.headers().firstValue("Content-Type")).hasValueSatisfying(
                t -> assertThat(t).startsWith("text/event-stream"));
        List<String> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(feed.body(), StandardCharsets.UTF_8))) {
            // retry, then one report event and one cluster event (each ends with a blank line)
            for (int blank = 0; blank < 3; ) {
                String line = reader.readLine();
                lines.add(line);
                blank += line.isEmpty() ? 1 : 0;
            }
        }
        assertThat(lines).containsSubsequence("event: report", "data: 1",
                "data: {\"worker\":\"worker1\",", "data: \"note\":\"two lines\"}", "", "event: cluster");
    }
}
