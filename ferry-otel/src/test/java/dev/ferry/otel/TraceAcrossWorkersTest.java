package dev.ferry.otel;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.testing.LocalCluster;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A chain worker0 → worker1 → worker2 is one trace, each span under the right parent. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class TraceAcrossWorkersTest {
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private OpenTelemetrySdk sdk;
    private LocalCluster cluster;

    @BeforeAll
    void start() {
        GlobalOpenTelemetry.resetForTest();
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .buildAndRegisterGlobal();
        cluster = LocalCluster.start(3);
    }

    @AfterAll
    void stop() {
        try {
            cluster.close();
        } finally {
            sdk.close();
            GlobalOpenTelemetry.resetForTest();
        }
    }

    @BeforeEach
    void clear() {
        exporter.reset();
    }

    @Test
    void aChainOfNestedCallsIsOneTraceWithTheRightParents() {
        Span root = sdk.getTracer("test").spanBuilder("train-step").startSpan();
        try (Scope scope = root.makeCurrent()) {
            assertThat(cluster.agent(0).rpcSync("worker1", Ops::relay, "worker2", 42)).isEqualTo(42);
        } finally {
            root.end();
        }

        List<SpanData> spans = exporter.getFinishedSpanItems();
        assertThat(spans).hasSize(5);
        assertThat(spans).extracting(SpanData::getTraceId).containsOnly(root.getSpanContext().getTraceId());
        Map<String, SpanData> bySpanId = spans.stream().collect(Collectors.toMap(SpanData::getSpanId, Function.identity()));

        SpanData client01 = only(spans, SpanKind.CLIENT, "worker0", "worker1");
        SpanData server01 = only(spans, SpanKind.SERVER, "worker0", "worker1");
        SpanData client12 = only(spans, SpanKind.CLIENT, "worker1", "worker2");
        SpanData server12 = only(spans, SpanKind.SERVER, "worker1", "worker2");
        assertThat(client01.getParentSpanId()).isEqualTo(root.getSpanContext().getSpanId());
        assertThat(server01.getParentSpanId()).isEqualTo(client01.getSpanId());
        assertThat(client12.getParentSpanId()).isEqualTo(server01.getSpanId());
        assertThat(server12.getParentSpanId()).isEqualTo(client12.getSpanId());
        assertThat(server01.getParentSpanContext().isRemote()).isTrue();
        assertThat(bySpanId.get(client01.getParentSpanId()).getName()).isEqualTo("train-step");

        assertThat(client01.getName()).isEqualTo("Ops/relay");
        assertThat(server12.getName()).isEqualTo("Ops/noop");
        assertThat(client01.getAttributes().asMap()).containsKey(
                io.opentelemetry.api.common.AttributeKey.stringKey("rpc.system"));
        assertThat(client01.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        // Each server span lies within its client span (one JVM: one clock).
        assertThat(server01.getStartEpochNanos()).isGreaterThanOrEqualTo(client01.getStartEpochNanos());
        assertThat(server01.getEndEpochNanos()).isLessThanOrEqualTo(client01.getEndEpochNanos());
        assertThat(CallSpans.open()).isZero();
    }

    @Test
    void aFailedCallEndsItsSpansWithTheError() {
        Span root = sdk.getTracer("test").spanBuilder("failing").startSpan();
        try (Scope scope = root.makeCurrent()) {
            assertThatThrownBy(() -> cluster.agent(0).rpcSync("worker1", Ops::fail, "no"))
                    .isInstanceOf(RpcException.class);
        } finally {
            root.end();
        }

        List<SpanData> spans = exporter.getFinishedSpanItems();
        SpanData client = only(spans, SpanKind.CLIENT, "worker0", "worker1");
        SpanData server = only(spans, SpanKind.SERVER, "worker0", "worker1");
        assertThat(client.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(client.getStatus().getDescription()).isEqualTo("REMOTE_ERROR");
        assertThat(server.getStatus().getDescription()).isEqualTo(IllegalArgumentException.class.getName());
        assertThat(server.getEvents()).anySatisfy(event -> assertThat(event.getName()).isEqualTo("exception"));
    }

    @Test
    void callsOutsideAnySpanAreNotTraced() {
        assertThat(cluster.agent(0).rpcSync("worker1", Ops::relay, "worker2", 1)).isEqualTo(1);

        assertThat(exporter.getFinishedSpanItems()).isEmpty();
        assertThat(CallSpans.open()).isZero();
    }

    @Test
    void ferrysOwnCallsInsideASpanAreNotTraced() {
        Span root = sdk.getTracer("test").spanBuilder("gather").startSpan();
        try (Scope scope = root.makeCurrent()) {
            cluster.onEach(agent -> agent.allGather(agent.getWorkerInfo().name()));
        } finally {
            root.end();
        }
        assertThat(exporter.getFinishedSpanItems()).extracting(SpanData::getName).containsExactly("gather");
        assertThat(CallSpans.open()).isZero();
    }

    private static SpanData only(List<SpanData> spans, SpanKind kind, String caller, String callee) {
        List<SpanData> found = spans.stream()
                .filter(span -> span.getKind() == kind
                        && caller.equals(span.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("ferry.caller")))
                        && callee.equals(span.getAttributes().get(io.opentelemetry.api.common.AttributeKey.stringKey("ferry.callee"))))
                .toList();
        assertThat(found).as("%s spans %s -> %s in %s", kind, caller, callee, spans).hasSize(1);
        return found.get(0);
    }
}
