package dev.ferry.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.ferry.rpc.testing.Eventually;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Agents with a status URL report their state, calls per peer, errors and reported series as JSON. */
@Timeout(60)
class StatusReportTest {
    private static final String TOKEN = "a-token-of-the-group-0123456789";

    @Test
    void agentsReportTheirCallsErrorsAndSeriesWithTheToken() throws Exception {
        Map<String, JsonNode> latest = new ConcurrentHashMap<>();
        Map<String, String> authorization = new ConcurrentHashMap<>();
        ObjectMapper json = new ObjectMapper();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/report", exchange -> {
            try (exchange; InputStream body = exchange.getRequestBody()) {
                JsonNode report = json.readTree(new String(body.readAllBytes(), StandardCharsets.UTF_8));
                latest.put(report.get("worker").asText(), report);
                authorization.put(report.get("worker").asText(),
                        String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
                exchange.sendResponseHeaders(204, -1);
            }
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/report";
        try (LocalCluster cluster = LocalCluster.start(2, b -> b.statusUrl(url).authToken(TOKEN))) {
            RpcAgent agent = cluster.agent(0);
            for (int i = 0; i < 10; i++) {
                agent.rpcSync("worker1", Ops::add, i, i);
            }
            assertThatThrownBy(() -> agent.rpcSync("worker1", Ops::fail, "on purpose")).isInstanceOf(RpcException.class);
            Metrics.report(agent, "loss", 0, 2.5);
            Metrics.report(agent, "loss", 1, 2.0);

            Eventually.until("worker0 reports its 11 calls to worker1", () -> latest.containsKey("worker0")
                    && latest.get("worker0").path("peers").path("worker1").path("sent").asLong() == 11
                    && latest.get("worker0").path("series").path("loss").size() == 2);
            JsonNode report = latest.get("worker0");
            assertThat(report.get("rank").asInt()).isZero();
            assertThat(report.get("worldSize").asInt()).isEqualTo(2);
            assertThat(report.get("state").asText()).isEqualTo("RUNNING");
            assertThat(report.get("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
            assertThat(report.get("host").asText()).isNotEmpty();
            assertThat(report.path("peers").path("worker1").path("failed").asLong()).isEqualTo(1);
            assertThat(report.path("series").path("loss").get(1).get(1).asDouble()).isEqualTo(2.0);
            JsonNode error = report.path("errors").get(0);
            assertThat(error.get("side").asText()).isEqualTo("call");
            assertThat(error.get("type").asText()).isEqualTo(IllegalArgumentException.class.getName());
            assertThat(error.get("worker").asText()).isEqualTo("worker1");
            assertThat(error.get("function").asText()).isEqualTo("Ops::fail");
            assertThat(error.get("message").asText()).isEqualTo("on purpose");
            assertThat(authorization.get("worker0")).isEqualTo("Bearer " + TOKEN);

            Eventually.until("worker1 reports the requests it ran", () -> latest.containsKey("worker1")
                    && latest.get("worker1").path("peers").path("worker0").path("received").asLong() == 11);
            assertThat(latest.get("worker1").path("errors").get(0).get("side").asText()).isEqualTo("request");
            assertThat(Metrics.series(agent)).containsOnlyKeys("loss");
        } finally {
            server.stop(0);
        }
        // The last report, at shutdown, says so.
        assertThat(latest.get("worker0").get("state").asText()).isEqualTo("CLOSED");
    }

    @Test
    void aStatusUrlMustBeHttp() {
        assertThatThrownBy(() -> RpcBackendOptions.builder().statusUrl("file:///tmp/x"))
                .isInstanceOf(RpcException.class).hasMessageContaining("http or https");
    }

    @Test
    void aLongSeriesKeepsItsWholeCurveWithinItsBound() {
        try (LocalCluster cluster = LocalCluster.start(1)) {
            RpcAgent agent = cluster.agent(0);
            for (int step = 0; step < 5 * Metrics.MAX_POINTS; step++) {
                Metrics.report(agent, "loss", step, step);
            }
            List<double[]> points = Metrics.series(agent).get("loss");
            assertThat(points.size()).isLessThanOrEqualTo(Metrics.MAX_POINTS);
            assertThat(points.get(0)[0]).isZero();
            assertThat(points.get(points.size() - 1)[0]).isGreaterThan(4 * Metrics.MAX_POINTS);
        }
    }
}
