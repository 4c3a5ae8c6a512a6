package dev.ferry.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.rpc.RpcProfiler.KeyAverage;
import dev.ferry.rpc.RpcProfiler.Side;
import dev.ferry.rpc.RpcProfiler.Span;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The profiler records calls and their nested calls on every worker, as a table and a Chrome trace. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class RpcProfilerTest {
    private LocalCluster cluster;

    @BeforeAll
    void start() {
        cluster = LocalCluster.start(3);
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    private RpcProfiler profileSomeCalls() {
        RpcAgent agent = cluster.agent(0);
        agent.rpcSync("worker1", Ops::add, 0, 0); // before: not profiled
        RpcProfiler profiler = RpcProfiler.start(agent);
        try (profiler) {
            for (int i = 0; i < 5; i++) {
                assertThat(agent.rpcSync("worker1", Ops::add, i, 1)).isEqualTo(i + 1);
            }
            for (int i = 0; i < 3; i++) {
                assertThat(agent.rpcSync("worker1", Ops::relay, "worker2", i)).isEqualTo(i); // worker1 -> worker2
            }
            assertThat(agent.rpcAsync("worker2", Ops::concat, "a", "b").await()).isEqualTo("ab");
            assertThatThrownBy(() -> agent.rpcSync("worker2", Ops::fail, "no")).isInstanceOf(RpcException.class);
        }
        agent.rpcSync("worker1", Ops::add, 0, 0); // after: not profiled
        return profiler;
    }

    @Test
    void keyAveragesCountEveryCallOnceWithBothSidesTimes() {
        RpcProfiler profiler = profileSomeCalls();

        Map<String, KeyAverage> rows = profiler.keyAverages().stream()
                .collect(Collectors.toMap(KeyAverage::key, Function.identity()));
        assertThat(rows.keySet()).containsExactlyInAnyOrder(
                "rpc#Ops::add(worker0 -> worker1)", "rpc#Ops::relay(worker0 -> worker1)",
                "rpc#Ops::noop(worker1 -> worker2)", "rpc#Ops::concat(worker0 -> worker2)",
                "rpc#Ops::fail(worker0 -> worker2)");
        KeyAverage add = rows.get("rpc#Ops::add(worker0 -> worker1)");
        assertThat(add.calls()).isEqualTo(5);
        assertThat(add.failures()).isZero();
        assertThat(add.totalNanos()).isPositive();
        assertThat(add.averageNanos()).isEqualTo(add.totalNanos() / 5);
        assertThat(add.handlerNanos()).isPositive().isLessThan(add.totalNanos()); // from worker1's spans
        assertThat(add.serializeNanos()).isPositive();
        assertThat(add.deserializeNanos()).isPositive();
        assertThat(add.requestBytes()).isPositive();
        assertThat(add.responseBytes()).isPositive();
        assertThat(rows.get("rpc#Ops::noop(worker1 -> worker2)").calls()).isEqualTo(3); // nested, from worker1
        assertThat(rows.get("rpc#Ops::fail(worker0 -> worker2)").failures()).isEqualTo(1);
        // The relay's time on worker1 includes its nested call to worker2.
        assertThat(rows.get("rpc#Ops::relay(worker0 -> worker1)").handlerNanos())
                .isGreaterThan(rows.get("rpc#Ops::noop(worker1 -> worker2)").handlerNanos());
        assertThat(profiler.unreachableWorkers()).isEmpty();
    }

    @Test
    void spansComeFromEveryWorkerOnBothEndsOfEachCall() {
        RpcProfiler profiler = profileSomeCalls();

        List<Span> spans = profiler.spans();
        assertThat(spans).hasSize(2 * (5 + 3 + 3 + 1 + 1));
        assertThat(spans.stream().map(Span::worker).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder("worker0", "worker1", "worker2");
        for (Span span : spans) {
            assertThat(span.worker()).isEqualTo(span.side() == Side.CALL ? span.caller() : span.callee());
            assertThat(span.phases()).extracting(RpcProfiler.Phase::name).containsExactlyElementsOf(
                    span.side() == Side.CALL ? List.of("serialize", "wait", "deserialize")
                            : List.of("queue", "deserialize", "handler", "serialize"));
            for (int i = 1; i < span.phases().size(); i++) {
                assertThat(span.phases().get(i).startEpochNanos()).isEqualTo(span.phases().get(i - 1).endEpochNanos());
            }
        }
        // Each request's stay on its callee lies within its call's wait (one clock: one JVM).
        Map<String, Span> calls = spans.stream().filter(span -> span.side() == Side.CALL)
                .collect(Collectors.toMap(span -> span.caller() + "#" + span.callId(), Function.identity()));
        for (Span request : spans.stream().filter(span -> span.side() == Side.REQUEST).toList()) {
            Span call = calls.get(request.caller() + "#" + request.callId());
            assertThat(call).as("the call of %s", request).isNotNull();
            assertThat(request.startEpochNanos()).isBetween(call.startEpochNanos(), call.endEpochNanos());
            assertThat(request.endEpochNanos()).isLessThanOrEqualTo(call.endEpochNanos());
        }
    }

    @Test
    void theTableHasARowPerFunctionAndPairOfWorkers() {
        String table = profileSomeCalls().table();

        List<String> lines = table.lines().toList();
        assertThat(lines.get(1)).startsWith("Name").contains("# of Calls", "CPU total", "CPU time avg", "Handler",
                "Request bytes");
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("rpc#Ops::add(worker0 -> worker1)")
                .matches(".*\\s5\\s+0\\s+\\S+s\\s+.*"));
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("rpc#Ops::noop(worker1 -> worker2)"));
        assertThat(lines.get(lines.size() - 1)).startsWith("Profiled wall time: ");
    }

    @Test
    void theChromeTraceIsValidJsonWithATrackPerWorker(@TempDir Path dir) throws Exception {
        RpcProfiler profiler = profileSomeCalls();
        Path file = dir.resolve("trace.json");
        profiler.exportChromeTrace(file);

        JsonNode trace = new ObjectMapper().readTree(Files.readString(file));
        JsonNode events = trace.get("traceEvents");
        assertThat(events.isArray()).isTrue();
        Map<Integer, String> processes = new java.util.HashMap<>();
        Set<Integer> pidsWithSpans = new HashSet<>();
        int flows = 0;
        for (JsonNode event : events) {
            switch (event.get("ph").asText()) {
                case "M" -> {
                    if (event.get("name").asText().equals("process_name")) {
                        processes.put(event.get("pid").asInt(), event.get("args").get("name").asText());
                    }
                }
                case "X" -> {
                    pidsWithSpans.add(event.get("pid").asInt());
                    assertThat(event.get("ts").asDouble()).isNotNegative();
                    assertThat(event.get("dur").asDouble()).isNotNegative();
                }
                case "s", "f" -> flows++;
                default -> throw new AssertionError("unexpected event " + event);
            }
        }
        assertThat(processes).containsEntry(0, "worker0").containsEntry(1, "worker1").containsEntry(2, "worker2");
        assertThat(pidsWithSpans).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(flows).isEqualTo(2 * 13);
    }

    @Test
    void resultsWaitForTheClose() {
        try (RpcProfiler profiler = RpcProfiler.start(cluster.agent(0))) {
            assertThatThrownBy(profiler::table).isInstanceOf(IllegalStateException.class);
        }
    }
}
