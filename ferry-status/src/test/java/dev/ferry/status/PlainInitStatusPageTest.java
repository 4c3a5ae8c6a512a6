package dev.ferry.status;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.Eventually;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/** A group started without the launcher opts in with statusPagePort: rank 0 serves, every worker reports. */
@Timeout(60)
class PlainInitStatusPageTest {
    private final HttpClient client = HttpClient.newHttpClient();

    private String get(URI uri) throws Exception {
        return client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void rankZeroServesThePageAndEveryWorkerReportsToIt() throws Exception {
        URI page;
        try (LocalCluster cluster = LocalCluster.start(3, b -> b.statusPagePort(0)
                .authToken("a-token-of-the-group-0123456789"))) {
            cluster.agent(0).rpcSync("worker1", Ops::add, 1, 2);
            page = URI.create(cluster.agent(0).getDebugInfo().get("agent.status_page"));
            assertThat(page.getHost()).isEqualTo("127.0.0.1");
            assertThat(cluster.agent(1).getDebugInfo()).doesNotContainKey("agent.status_page");
            assertThat(get(page)).contains("<title>Ferry cluster</title>");

            URI state = page.resolve("/api/cluster");
            Eventually.until("every worker reports", () -> {
                try {
                    return get(state).split("\"state\":\"reporting\"", -1).length - 1 == 3;
                } catch (Exception e) {
                    return false;
                }
            });
        }
        // Closed with rank 0's agent.
        URI closed = page;
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> get(closed))).isNotNull();
    }

    @Test
    void aReportedErrorIsRaisedOnTheCalleeWhenItFailedThereAndOnTheCallerWhenItFailedHere() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.statusPagePort(0)
                .authToken("a-token-of-the-group-0123456789"))) {
            RpcAgent caller = cluster.agent(0);
            assertThat(catchThrowable(() -> caller.rpcSync("worker1", Ops::fail, "on purpose"))).isNotNull();
            assertThat(catchThrowable(() -> caller.to("worker1").withTimeout(Duration.ofMillis(50))
                    .rpcSync(Ops::sleepMillis, 2_000L))).isInstanceOf(RpcException.class);

            URI events = URI.create(caller.getDebugInfo().get("agent.status_page")).resolve("/api/events");
            HttpResponse<java.io.InputStream> feed = client.send(HttpRequest.newBuilder(events).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            String report = "";
            try (java.io.BufferedReader lines = new java.io.BufferedReader(
                    new java.io.InputStreamReader(feed.body(), java.nio.charset.StandardCharsets.UTF_8))) {
                // rank 0's reports until one holds both errors (bounded by @Timeout: it reports twice a second)
                for (String previous = "", line; !report.contains("TIMEOUT") && (line = lines.readLine()) != null;
                        previous = line) {
                    if (previous.equals("data: 0") && line.startsWith("data: {")) {
                        report = line;
                    }
                }
            }
            // the function threw on worker1; the timeout was raised on worker0, which waited for worker1
            assertThat(report).contains("\"side\":\"call\",\"peer\":\"worker1\"")
                    .contains("\"type\":\"java.lang.IllegalArgumentException\",\"worker\":\"worker1\","
                            + "\"message\":\"on purpose\"")
                    .contains("\"type\":\"TIMEOUT\",\"worker\":\"worker0\"");
        }
    }
}
