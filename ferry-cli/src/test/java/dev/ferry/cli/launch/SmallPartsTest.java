package dev.ferry.cli.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The launcher's small building blocks, without starting processes. */
class SmallPartsTest {

  @Test
  void jvmFlagsComeFromTheFilteredRootPomProperty() {
    assertThat(JvmFlags.defaults()).contains("--enable-native-access=ALL-UNNAMED")
        .noneMatch(flag -> flag.contains("${"));
    assertThat(JvmFlags.defaults()).as("the workers' own flags, after every JVM's")
        .containsSubsequence("--enable-native-access=ALL-UNNAMED", "-Dio.netty.leakDetection.level=disabled");
    assertThat(JvmFlags.parse("  -a   -b=c \t")).containsExactly("-a", "-b=c");
    assertThat(JvmFlags.parse(" ")).isEmpty();
  }

  @Test
  void theMainThreadsErrorIsTheFirstSuchLineCutToOneSummaryLine() {
    MainThreadError error = new MainThreadError();
    error.observe("Exception in thread \"ferry-callbacks\" java.lang.RuntimeException: not main");
    error.observe("[0] Exception in thread \"main\" prefixed lines are someone else's");
    assertThat(error.error()).isNull();

    error.observe("Exception in thread \"main\" java.lang.IllegalStateException: " + "x".repeat(500));
    error.observe("Exception in thread \"main\" java.lang.Error: a second one");

    assertThat(error.error()).hasSize(MainThreadError.MAX_LENGTH).startsWith("java.lang.IllegalStateException: xxx")
        .endsWith("x…");
  }

  @Test
  void smallMachinesGetASecondC2CompilerThread() {
    assertThat(JvmFlags.forProcessors(1)).containsExactly("-XX:CICompilerCount=3");
    assertThat(JvmFlags.forProcessors(2)).containsExactly("-XX:CICompilerCount=3");
    assertThat(JvmFlags.forProcessors(3)).containsExactly("-XX:CICompilerCount=3");
    assertThat(JvmFlags.forProcessors(4)).isEmpty(); // HotSpot's own choice is 3 there
    assertThat(JvmFlags.forProcessors(64)).isEmpty();
    assertThat(JvmFlags.defaults()).endsWith(
        JvmFlags.forProcessors(Runtime.getRuntime().availableProcessors()).toArray(String[]::new));
  }

  @Test
  void freePortCanBeBound() throws IOException {
    int port = FreePorts.pick();
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      assertThat(socket.getLocalPort()).isEqualTo(port);
    }
  }

  @Test
  void javaExecutableIsThisJvmsJava() {
    assertThat(JavaExecutable.current()).startsWith(java.nio.file.Path.of(System.getProperty("java.home"))).satisfies(p ->
        assertThat(Files.isExecutable(p)).isTrue());
  }

  @Test
  void pumpDeliversWholeLinesIncludingAnUnterminatedLastOne() throws InterruptedException {
    CollectingSink sink = new CollectingSink();
    byte[] bytes = "one\r\ntwo\n\nthree é".getBytes(StandardCharsets.UTF_8);

    LinePump pump = LinePump.start(4, WorkerStream.STDERR, new ByteArrayInputStream(bytes), StandardCharsets.UTF_8, sink);

    assertThat(pump.awaitEnd(Duration.ofSeconds(10))).isTrue();
    assertThat(sink.lines(4, WorkerStream.STDERR)).containsExactly("one", "two", "", "three é");
  }

  @Test
  void pumpKeepsDrainingWhenTheSinkFails() throws InterruptedException {
    LineSink failing = (rank, stream, line) -> {
      throw new IllegalStateException("sink broke");
    };
    LinePump pump = LinePump.start(0, WorkerStream.STDOUT,
        new ByteArrayInputStream("a\nb\nc\n".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8, failing);

    assertThat(pump.awaitEnd(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  void consoleSinkPrefixesWithTheRankAndSeparatesStreams() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    ConsoleLineSink sink = ConsoleLineSink.to(new PrintStream(out, false, StandardCharsets.UTF_8),
        new PrintStream(err, false, StandardCharsets.UTF_8), true);

    sink.accept(2, WorkerStream.STDOUT, "hello");
    sink.accept(0, WorkerStream.STDERR, "oops");

    String nl = System.lineSeparator();
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("[2] hello" + nl);
    assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("[0] oops" + nl);
  }

  @Test
  void elapsedIsReadable() {
    assertThat(Elapsed.format(Duration.ofMillis(250))).isEqualTo("250 ms");
    assertThat(Elapsed.format(Duration.ofMillis(2310))).isEqualTo("2.31 s");
    assertThat(Elapsed.format(Duration.ofSeconds(185))).isEqualTo("3 min 5 s");
  }
}
