package dev.ferry.examples;

import dev.ferry.cli.launch.GroupResult;
import dev.ferry.cli.launch.LineSink;
import dev.ferry.cli.launch.WorkerGroup;
import dev.ferry.cli.launch.WorkerGroupSpec;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Runs an example's main class on real worker JVMs started by the launcher (rendezvous by env://,
 * as {@code ferry run} does), with this test's class path, and collects every line they print as
 * {@code "<rank>|<line>"}.
 */
final class ExampleRun {
    final GroupResult result;
    final List<String> lines;

    private ExampleRun(GroupResult result, List<String> lines) {
        this.result = result;
        this.lines = lines;
    }

    static ExampleRun of(String mainClass, int nproc) throws Exception {
        return of(mainClass, nproc, Map.of(), List.of());
    }

    static ExampleRun of(String mainClass, int nproc, Map<String, String> env, List<String> args) throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        LineSink sink = (rank, stream, line) -> lines.add(rank + "|" + line);
        WorkerGroupSpec.Builder builder = WorkerGroupSpec.builder()
                .nproc(nproc)
                .mainClass(mainClass)
                .args(args)
                .classpath(System.getProperty("java.class.path"))
                .sink(sink);
        env.forEach(builder::putEnv);
        try (WorkerGroup group = new WorkerGroup(builder.build()).start()) {
            return new ExampleRun(group.awaitCompletion(Duration.ofSeconds(90)), lines);
        }
    }

    boolean succeeded() {
        return result.succeeded();
    }

    /** What went wrong, for assertion messages: the summary and every line. */
    String transcript() {
        return result.summary() + "\n" + String.join("\n", lines);
    }
}
