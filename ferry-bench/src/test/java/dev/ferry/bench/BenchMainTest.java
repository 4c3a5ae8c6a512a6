package dev.ferry.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Command-line parsing only; no benchmark runs here. */
class BenchMainTest {

  @Test
  void defaults() {
    BenchMain.Command c = BenchMain.parse(new String[] {"w1"});
    assertThat(c.workloads()).containsExactly("w1");
    assertThat(c.options().repeats()).isEqualTo(5);
    assertThat(c.options().quick()).isFalse();
    assertThat(c.options().outDir()).isEqualTo(Path.of("bench-results"));
    assertThat(c.parts()).containsExactly("chain", "probe_sync", "probe_async");
  }

  @Test
  void allExpandsToEveryImplementedWorkload() {
    BenchMain.Command c = BenchMain.parse(new String[] {"all", "--repeats", "3", "--quick", "--out", "x"});
    assertThat(c.workloads()).containsExactly("w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8");
    assertThat(c.options().repeats()).isEqualTo(3);
    assertThat(c.options().quick()).isTrue();
    assertThat(c.options().outDir()).isEqualTo(Path.of("x"));
  }

  @Test
  void tcpOnlyIsAnOption() {
    assertThat(BenchMain.parse(new String[] {"w1"}).options().tcp()).isFalse();
    assertThat(BenchMain.parse(new String[] {"w1", "--tcp"}).options().tcp()).isTrue();
  }

  @Test
  void workerJvmArgsAccumulate() {
    BenchMain.Command c = BenchMain.parse(new String[] {"w3", "--jvm-arg=-Xlog:gc", "--jvm-arg", "-XX:+UseParallelGC"});
    assertThat(c.options().workerJvmArgs()).containsExactly("-Xlog:gc", "-XX:+UseParallelGC");
  }

  @Test
  void badArgumentsAreRejected() {
    assertThatThrownBy(() -> BenchMain.parse(new String[] {"w9"})).hasMessageContaining("unknown workload")
        .hasMessageNotContaining("not implemented");
    assertThatThrownBy(() -> BenchMain.parse(new String[] {"w1", "--repeats", "0"})).hasMessageContaining("positive");
    assertThatThrownBy(() -> BenchMain.parse(new String[] {"w7", "--parts", "nope"})).hasMessageContaining("--parts");
    assertThatThrownBy(() -> BenchMain.parse(new String[] {})).hasMessageContaining("no workload");
  }

  @Test
  void helpReturnsNull() {
    assertThat(BenchMain.parse(new String[] {"--help"})).isNull();
  }
}
