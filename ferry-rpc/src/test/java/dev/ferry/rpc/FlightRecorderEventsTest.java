package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Calls and the requests they become show up in a JDK Flight Recorder recording as
 * {@code dev.ferry.rpc.Call} (caller side) and {@code dev.ferry.rpc.Request} (callee side) events,
 * with who, what, how big, how long and how it ended.
 */
@Timeout(60)
class FlightRecorderEventsTest {

    /**
     * A recording holds each thread's events in the order that thread's buffer was flushed, not in
     * the order they happened: the callee ran the two requests on different threads.
     */
    private static final Comparator<RecordedEvent> BY_START = Comparator.comparing(RecordedEvent::getStartTime);
    @Test
    void callsAndRequestsAreRecordedWithTheirOutcome(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("calls.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.ferry.rpc.Call").withThreshold(Duration.ZERO);
            recording.enable("dev.ferry.rpc.Request").withThreshold(Duration.ZERO);
            recording.start();
            try (LocalCluster cluster = LocalCluster.start(2)) {
                RpcAgent w0 = cluster.agent(0);
                assertThat(w0.rpcSync("worker1", Ops::concat, "fl", "ight")).isEqualTo("flight");
                assertThatThrownBy(() -> w0.rpcSync("worker1", Ops::fail, "on purpose"))
                        .isInstanceOf(RpcException.class);
            }
            // The callee commits a request's event after sending its answer; a graceful shutdown
            // waits for running requests, so both events are in by now (a call's event is in
            // before its caller sees the answer).
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> calls = events.stream().filter(e -> e.getEventType().getName().equals("dev.ferry.rpc.Call"))
                .filter(e -> !e.getBoolean("system")).sorted(BY_START).toList();
        List<RecordedEvent> requests = events.stream()
                .filter(e -> e.getEventType().getName().equals("dev.ferry.rpc.Request"))
                .filter(e -> e.getString("function").startsWith("Ops::")).sorted(BY_START).toList();

        assertThat(calls).hasSize(2).allSatisfy(call -> {
            assertThat(call.getString("caller")).isEqualTo("worker0");
            assertThat(call.getString("callee")).isEqualTo("worker1");
            assertThat(call.getLong("requestBytes")).isPositive();
            assertThat(call.getDuration()).isPositive();
        });
        assertThat(calls).extracting(e -> e.getString("function") + " " + e.getString("outcome")).containsExactly(
                "Ops::concat ok", "Ops::fail REMOTE_ERROR");
        assertThat(requests).extracting(e -> e.getString("caller") + " " + e.getString("function") + " "
                + e.getString("outcome")).containsExactly(
                "worker0 Ops::concat ok", "worker0 Ops::fail " + IllegalArgumentException.class.getName());
    }

    /**
     * Where nothing initialized the Flight Recorder, calls and requests leave it alone (neither
     * Ferry's events nor Netty's load its metadata); a recording started later, as {@code jcmd
     * JFR.start} would, records them from then on. In a fresh JVM, since this one may have a recorder
     * already.
     */
    @Test
    void callsLeaveTheFlightRecorderAloneUntilARecordingStarts(@TempDir Path dir) throws Exception {
        Path classes = dir.resolve("classes.log");
        String output = FreshJvm.run(dir.resolve("probe.log"), List.of("-Xlog:class+load=info:file=" + classes),
                JfrProbeMain.class, dir.resolve("late.jfr").toString());
        assertThat(output.lines().filter(line -> line.startsWith("initialized=") || line.startsWith("recorded ")))
                .as(output).containsExactly("initialized=false", "recorded calls=1 requests=1");
        // Registering any event class, Ferry's or Netty's, loads the recorder's metadata
        // (MetadataRepository): not before the recording.
        List<String> loaded = Files.readAllLines(classes);
        int checkpoint = loaded.indexOf(loaded.stream().filter(line -> line.contains("JfrProbeMain$Checkpoint "))
                .findFirst().orElseThrow());
        assertThat(loaded.subList(0, checkpoint)).noneMatch(line -> line.contains("jdk.jfr.internal.MetadataRepository "));
        assertThat(loaded.subList(checkpoint, loaded.size())).anyMatch(line -> line.contains("jdk.jfr.internal.MetadataRepository "));
    }
}
