package dev.ferry.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.bench.harness.WorkerOutput;
import dev.ferry.cli.launch.WorkerStream;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Result extraction of W7's probe and W6's line timeline, without starting any worker. */
class ProbeAndTimelineTest {

  @Test
  void probeMetricsTakeRankZeroFiguresAndEveryRanksShutdownOutcome() {
    Map<Integer, Map<String, Object>> results = Map.of(
        0, Map.of("completed", 32, "failed", 0, "error_texts", Map.of("x", 1), "phase", "after_shutdown",
            "shutdown_finished", 1),
        1, Map.of("shutdown_finished", -1));
    Map<String, Double> m = W7Nested.probeMetrics(results);
    assertThat(m).containsEntry("completed", 32.0).containsEntry("failed", 0.0)
        .containsEntry("rank0_shutdown_finished", 1.0)
        .containsEntry("rank1_shutdown_finished", -1.0)
        // rank 2 never reported after shutdown: counted as still stuck, as w7_nested.py does
        .containsEntry("rank2_shutdown_finished", 0.0)
        .doesNotContainKeys("shutdown_finished", "error_texts.x");
  }

  @Test
  void timelineWaitsForEveryRankAndKeepsTheFirstArrival() throws Exception {
    WorkerOutput output = new WorkerOutput(false);
    W6Timeline timeline = new W6Timeline(output.lines());
    output.accept(1, WorkerStream.STDOUT, "READY");
    output.accept(0, WorkerStream.STDOUT, "READY");
    output.accept(0, WorkerStream.STDOUT, "INIT");
    long deadline = System.nanoTime() + 1_000_000_000L;
    long last = timeline.awaitAll("READY", 2, deadline);
    assertThat(last).isEqualTo(timeline.max("READY"));
    assertThat(timeline.min("READY")).isLessThanOrEqualTo(last);
    assertThatThrownBy(() -> timeline.awaitAll("INIT", 2, System.nanoTime()))
        .isInstanceOf(TimeoutException.class).hasMessageContaining("1 of 2 ranks sent INIT");
  }

  @Test
  void resultLinesAreParsedAndTheLastOneWins() {
    WorkerOutput output = new WorkerOutput(false);
    output.accept(0, WorkerStream.STDOUT, "RESULT {\"phase\":\"before_shutdown\"}");
    output.accept(0, WorkerStream.STDOUT, "RESULT {\"phase\":\"after_shutdown\",\"shutdown_finished\":1}");
    assertThat(output.results().get(0)).containsEntry("phase", "after_shutdown");
    assertThat(output.missing(2)).containsExactly(1);
  }
}
