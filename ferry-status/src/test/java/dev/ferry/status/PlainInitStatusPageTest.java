package dev.ferry.status;

import dev.ferry.rpc.Ops;
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
}
