package dev.ferry.rpc;

import dev.ferry.rpc.testing.LocalCluster;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Runs a two-worker group in a fresh JVM ({@link FlightRecorderEventsTest}): makes calls both ways and
 * prints whether the JVM's Flight Recorder got initialized meanwhile; then starts a recording, as
 * {@code jcmd JFR.start} would, makes one more call, and prints the application's calls and requests
 * the recording holds (written to {@code args[0]}).
 */
public final class JfrProbeMain {
    private JfrProbeMain() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        try (Recording recording = startedAfterCalls()) {
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        long calls = events.stream().filter(e -> e.getEventType().getName().equals("dev.ferry.rpc.Call"))
                .filter(e -> !e.getBoolean("system")).count();
        long requests = events.stream().filter(e -> e.getEventType().getName().equals("dev.ferry.rpc.Request"))
                .filter(e -> e.getString("function").startsWith("Ops::")).count();
        System.out.println("recorded calls=" + calls + " requests=" + requests);
    }

    /** Loaded (and so named in a class-loading log) once the calls without a recording are done. */
    static final class Checkpoint {
        static void mark() {
        }
    }

    /** The recording, started once calls ran without one; the group is closed (gracefully) before it returns. */
    private static Recording startedAfterCalls() {
        try (LocalCluster cluster = LocalCluster.start(2)) {
            for (int i = 0; i < 100; i++) {
                cluster.agent(0).rpcSync("worker1", Ops::concat, "a", "b");
                cluster.agent(1).rpcSync("worker0", Ops::concat, "c", "d");
            }
            System.out.println("initialized=" + FlightRecorder.isInitialized());
            Checkpoint.mark();
            Recording recording = new Recording();
            recording.enable("dev.ferry.rpc.Call").withThreshold(Duration.ZERO);
            recording.enable("dev.ferry.rpc.Request").withThreshold(Duration.ZERO);
            recording.start();
            cluster.agent(0).rpcSync("worker1", Ops::concat, "e", "f");
            // Closing waits for running requests: the callee's event, committed after its answer, is in.
            return recording;
        }
    }
}
