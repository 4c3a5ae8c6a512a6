package dev.ferry.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The result file has the shape report.py reads (WORKLOADS.md, "Output"). */
class ResultDocumentTest {

  @TempDir
  Path dir;

  @Test
  void flattenKeepsNumericLeavesUnderDottedKeys() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("w8", Map.of("calls_per_s", 10));
    nested.put("median_us", 1.5);
    nested.put("phase", "before_shutdown");
    nested.put("ok", true);
    assertThat(RunAggregate.flatten(nested)).containsExactly(
        Map.entry("w8.calls_per_s", 10.0), Map.entry("median_us", 1.5));
  }

  @Test
  void aggregateGivesMedianMinMaxAndCountPerMetric() {
    Map<String, Map<String, Object>> s = RunAggregate.aggregate(List.of(
        Map.of("a", 1.0, "b", 5.0), Map.of("a", 4.0), Map.of("a", 2.0), Map.of("a", 3.0)));
    assertThat(s.get("a")).containsExactly(
        Map.entry("median", 2.5), Map.entry("min", 1.0), Map.entry("max", 4.0), Map.entry("n", 4));
    assertThat(s.get("b")).containsEntry("n", 1).containsEntry("median", 5.0);
  }

  @Test
  void writtenFileHasTheSharedShapeWithModeJava() throws Exception {
    ResultRecorder recorder = new ResultRecorder("w1_latency", Map.of("calls", 20_000), false);
    recorder.addRun(Map.of("median_us", 100.0), Map.of(0, Map.of("median_us", 100.0)));
    recorder.addRun(Map.of("median_us", 200.0), Map.of(0, Map.of("median_us", 200.0)));
    recorder.addFailure(2, List.of("rank 1 exit 1"), Map.of());

    Path file = ResultWriter.write(recorder, dir);

    assertThat(file.getFileName().toString()).isEqualTo("w1_latency.json");
    JsonNode doc = new ObjectMapper().readTree(Files.readString(file));
    assertThat(doc.get("workload").asText()).isEqualTo("w1_latency");
    assertThat(doc.get("params").get("calls").asInt()).isEqualTo(20_000);
    assertThat(doc.get("env").has("date_utc")).isTrue();
    assertThat(doc.get("env").get("loadavg_start").isArray()).isTrue();
    assertThat(doc.get("env").get("loadavg_end").isArray()).isTrue();
    JsonNode median = doc.get("summary").get(ResultRecorder.MODE).get("median_us");
    assertThat(median.get("median").asDouble()).isEqualTo(150.0);
    assertThat(median.get("min").asDouble()).isEqualTo(100.0);
    assertThat(median.get("max").asDouble()).isEqualTo(200.0);
    assertThat(median.get("n").asInt()).isEqualTo(2);
    assertThat(doc.get("runs").get("java")).hasSize(2);
    assertThat(doc.get("runs_full").get("java").get(0).get("0").get("median_us").asDouble()).isEqualTo(100.0);
    assertThat(doc.get("failures").get("java").get(0).get("repeat").asInt()).isEqualTo(2);
  }

  @Test
  void quickRunsGoToTheirOwnFile() throws Exception {
    ResultRecorder recorder = new ResultRecorder("w2_async_throughput", Map.of(), true);
    assertThat(ResultWriter.write(recorder, dir).getFileName().toString()).isEqualTo("w2_async_throughput_quick.json");
  }

  @Test
  void driverExtractionLeavesErrorTextsOutOfTheMetrics() {
    Map<Integer, Map<String, Object>> results = Map.of(
        0, Map.of("1KiB", Map.of("median_us", 90.0), "error_texts", Map.of("128MiB: failed", 1)),
        1, Map.of("idle_cpu_pct_rank1", 0.5));
    assertThat(Driver.mergeRanks(0, 1).apply(results))
        .containsOnlyKeys("1KiB.median_us", "idle_cpu_pct_rank1");
  }
}
