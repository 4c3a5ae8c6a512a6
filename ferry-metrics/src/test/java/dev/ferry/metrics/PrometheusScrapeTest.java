package dev.ferry.metrics;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.LocalCluster;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A real scrape over HTTP reads back the calls the test made, on both ends. */
@Timeout(60)
class PrometheusScrapeTest {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    @Test
    void aScrapeCountsTheCallsMadeAndRunWithTheirOutcomesAndDebugInfo() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (LocalCluster cluster = LocalCluster.start(2);
             RpcAgentMetrics caller = RpcAgentMetrics.of(cluster.agent(0));
             RpcAgentMetrics callee = RpcAgentMetrics.of(cluster.agent(1));
             PrometheusEndpoint endpoint = PrometheusEndpoint.start(registry, 0)) {
            caller.bindTo(registry);
            callee.bindTo(registry);
            for (int i = 0; i < 5; i++) {
                assertThat(cluster.agent(0).rpcSync("worker1", Ops::add, i, 1)).isEqualTo(i + 1);
            }
            for (int i = 0; i < 2; i++) {
                assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::fail, "no"))
                        .isInstanceOf(RpcException.class);
            }

            assertThat(endpoint.uri().getHost()).isEqualTo("127.0.0.1");
            HttpResponse<String> response = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(endpoint.uri()).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("Content-Type")).hasValue(PrometheusEndpoint.CONTENT_TYPE);
            String text = response.body();

            assertThat(sample(text, "ferry_calls_sent_seconds_count",
                    "worker", "worker0", "peer", "worker1", "function", "Ops::add", "outcome", "ok")).hasValue(5);
            assertThat(sample(text, "ferry_calls_sent_seconds_count",
                    "worker", "worker0", "peer", "worker1", "function", "Ops::fail", "outcome", "REMOTE_ERROR"))
                    .hasValue(2);
            assertThat(sample(text, "ferry_requests_received_seconds_count",
                    "worker", "worker1", "peer", "worker0", "function", "Ops::add", "outcome", "ok")).hasValue(5);
            assertThat(sample(text, "ferry_requests_handler_seconds_count", "worker", "worker1", "function",
                    "Ops::fail", "outcome", IllegalArgumentException.class.getName())).hasValue(2);
            // A latency histogram: its +Inf bucket holds every call.
            assertThat(sample(text, "ferry_calls_sent_seconds_bucket", "worker", "worker0", "function", "Ops::add",
                    "outcome", "ok", "le", "+Inf")).hasValue(5);
            assertThat(sample(text, "ferry_calls_sent_seconds_sum", "worker", "worker0", "function", "Ops::add",
                    "outcome", "ok").orElseThrow()).isPositive();
            assertThat(sample(text, "ferry_calls_sent_request_bytes_count", "worker", "worker0", "function",
                    "Ops::add")).hasValue(5);
            // PyTorch's debug info keys, under their names after the library's prefix.
            assertThat(sample(text, "ferry_agent_calls_sent", "worker", "worker0")).hasValue(7);
            assertThat(sample(text, "ferry_agent_requests_failed", "worker", "worker1")).hasValue(2);
            assertThat(sample(text, "ferry_rref_num_owner_rrefs", "worker", "worker1")).hasValue(0);
            assertThat(sample(text, "ferry_agent_num_worker_threads", "worker", "worker0")).isPresent();

            HttpResponse<String> missing = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(endpoint.uri().resolve("/other")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(missing.statusCode()).isEqualTo(404);
        }
        // Closed: the meters are gone from the registry.
        assertThat(registry.getMeters()).isEmpty();
    }

    /** The value of the sample {@code name} whose labels include {@code labels} (name, value, ...), if one. */
    private static OptionalDouble sample(String text, String name, String... labels) {
        Map<String, String> wanted = new TreeMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            wanted.put(labels[i], labels[i + 1]);
        }
        return Arrays.stream(text.split("\n"))
                .map(SAMPLE::matcher)
                .filter(Matcher::matches)
                .filter(m -> m.group(1).equals(name) && labelsOf(m.group(2)).entrySet().containsAll(wanted.entrySet()))
                .mapToDouble(m -> Double.parseDouble(m.group(3)))
                .findFirst();
    }

    private static Map<String, String> labelsOf(String labels) {
        Map<String, String> map = new TreeMap<>();
        if (labels != null) {
            Matcher m = LABEL.matcher(labels);
            while (m.find()) {
                map.put(m.group(1), m.group(2));
            }
        }
        return map;
    }
}
