package dev.ferry.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import jdk.jfr.Event;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ferry jfr summary} on a real recording holding events of Ferry's names and fields (the
 * launcher knows nothing of ferry-rpc, so the test records look-alikes of its two events).
 */
class JfrSummaryTest {

  @Name(JfrSummary.CALL)
  static final class Call extends Event {
    String caller;
    String callee;
    String function;
    long requestBytes;
    boolean system;
    String outcome;
  }

  @Name(JfrSummary.REQUEST)
  static final class Request extends Event {
    String caller;
    String function;
    long requestBytes;
    boolean asynchronous;
    String outcome;
  }

  private static void call(String function, String outcome, long bytes, boolean system) {
    Call event = new Call();
    event.begin();
    event.caller = "worker0";
    event.callee = "worker1";
    event.function = function;
    event.requestBytes = bytes;
    event.system = system;
    event.outcome = outcome;
    event.commit();
  }

  private static Path record(Path dir) throws Exception {
    return recordTo(dir.resolve("worker.jfr"));
  }

  private static Path recordTo(Path file) throws Exception {
    try (Recording recording = new Recording()) {
      recording.enable(JfrSummary.CALL).withThreshold(Duration.ZERO);
      recording.enable(JfrSummary.REQUEST).withThreshold(Duration.ZERO);
      recording.start();
      for (int i = 0; i < 5; i++) {
        call("Ops::add", "ok", 100, false);
      }
      call("Ops::add", "TIMEOUT", 100, false);
      call("SystemCalls::ack", "ok", 10, true);
      Request request = new Request();
      request.begin();
      request.caller = "worker1";
      request.function = "Ops::relay";
      request.requestBytes = 42;
      request.outcome = "java.lang.IllegalStateException";
      request.commit();
      recording.stop();
      recording.dump(file);
    }
    return file;
  }

  private static int run(String[] args, ByteArrayOutputStream out, ByteArrayOutputStream err) {
    return FerryCli.execute(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void summarisesCallsAndRequestsPerFunction(@TempDir Path dir) throws Exception {
    Path file = record(dir);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    assertThat(run(new String[] {"jfr", "summary", file.toString()}, out, err)).isZero();

    String table = out.toString(StandardCharsets.UTF_8);
    assertThat(table).contains("Calls made (dev.ferry.rpc.Call)", "Requests run (dev.ferry.rpc.Request)",
        "# of Calls", "p99", "8 events");
    assertThat(table.lines()).anySatisfy(line -> assertThat(line)
        .startsWith("rpc#Ops::add(worker0 -> worker1)").matches(".*\\s6\\s+1\\s+.*\\s600$"));
    assertThat(table.lines()).anySatisfy(line -> assertThat(line).startsWith("(ferry) rpc#SystemCalls::ack"));
    assertThat(table.lines()).anySatisfy(line -> assertThat(line)
        .startsWith("Ops::relay (from worker1)").matches(".*\\s1\\s+1\\s+.*\\s42$"));
  }

  @Test
  void theRecordingsOfSeveralWorkersMakeOneTable(@TempDir Path dir) throws Exception {
    Path first = recordTo(dir.resolve("worker-101.jfr"));
    Path second = recordTo(dir.resolve("worker-102.jfr"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    assertThat(run(new String[] {"jfr", "summary", first.toString(), second.toString()}, out,
        new ByteArrayOutputStream())).isZero();

    String table = out.toString(StandardCharsets.UTF_8);
    assertThat(table).contains("16 events");
    assertThat(table.lines()).anySatisfy(line -> assertThat(line)
        .startsWith("rpc#Ops::add(worker0 -> worker1)").matches(".*\\s12\\s+2\\s+.*\\s1200$"));

    Path broken = Files.writeString(dir.resolve("worker-103.jfr"), "not a recording");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(run(new String[] {"jfr", "summary", first.toString(), broken.toString()}, out, err)).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains(broken + " is not a readable Flight Recorder file");
  }

  @Test
  void aMissingOrBrokenFileFailsWithOneLine(@TempDir Path dir) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertThat(run(new String[] {"jfr", "summary", dir.resolve("none.jfr").toString()}, out, err)).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot read");

    Path broken = Files.writeString(dir.resolve("broken.jfr"), "not a recording");
    ByteArrayOutputStream err2 = new ByteArrayOutputStream();
    assertThat(run(new String[] {"jfr", "summary", broken.toString()}, out, err2)).isEqualTo(1);
    assertThat(err2.toString(StandardCharsets.UTF_8)).contains("is not a readable Flight Recorder file");
  }

  @Test
  void aRecordingWithoutFerryEventsSaysSo(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("empty.jfr");
    try (Recording recording = new Recording()) {
      recording.start();
      recording.stop();
      recording.dump(file);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThat(run(new String[] {"jfr", "summary", file.toString()}, out, new ByteArrayOutputStream())).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("No Ferry events");
  }
}
