package dev.ferry.bench.workload;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.harness.ResultRecorder;
import dev.ferry.bench.harness.ResultWriter;
import dev.ferry.bench.harness.WorkerLauncher;
import dev.ferry.bench.harness.WorkerOutput;
import dev.ferry.cli.launch.GroupResult;
import dev.ferry.cli.launch.WorkerGroup;
import dev.ferry.cli.launch.WorkerGroupSpec;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * W6 driver: init + graceful shutdown wall time for 2, 4 and 8 worker JVMs ({@link W6Worker}).
 * Per run, with every time read on the driver's clock ({@link System#nanoTime()}) when a
 * worker's line arrives (see {@link W6Worker} for why):
 *
 * <pre>
 * init_s     = last INIT  - t_go          the whole group is up
 * shutdown_s = last DONE  - first INIT
 * total_s    = last DONE  - t_go
 * ready_s    = last READY - spawn         JVM start + class loading; not part of init
 * init_local_max_s = max over ranks of (init returned - GO read), each on its worker's clock
 init_cpu_s_per_worker, init_classes_loaded_per_worker, init_jit_ms_per_worker
            = what init cost a worker (process CPU time, classes loaded, JIT compilation time),
              the mean over the ranks: evidence that does not depend on the machine's load
 * </pre>
 *
 * A line's arrival lags its event by the pipe and a thread wake-up (well under a millisecond),
 * small against the figures measured here.
 */
public final class W6InitShutdown {

  static final List<Integer> WORLDS = List.of(2, 4, 8);

  private W6InitShutdown() {}

  /** Runs W6 and writes {@code w6_init_shutdown.json}. */
  public static Path run(BenchOptions options) throws IOException, InterruptedException {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("worlds", WORLDS);
    params.put("clock", "driver System.nanoTime() at line arrival");
    if (!options.workerJvmArgs().isEmpty()) {
      params.put("extra_worker_jvm_args", options.workerJvmArgs());
    }
    ResultRecorder recorder = new ResultRecorder("w6_init_shutdown", params, options.quick());
    Duration timeout = options.timeoutOr(Duration.ofSeconds(120));
    int repeats = options.quick() ? 1 : options.repeats();
    for (int i = 0; i < repeats; i++) {
      Map<String, Double> metrics = new LinkedHashMap<>();
      Map<String, Object> full = new LinkedHashMap<>();
      List<String> errors = new ArrayList<>();
      for (int world : WORLDS) {
        try {
          Map<String, Double> r = oneRun(world, i, timeout, options.workerJvmArgs());
          r.forEach((k, v) -> metrics.put("world" + world + "." + k, v));
          full.put("world" + world, r);
          System.out.printf(Locale.ROOT, "[w6] world=%d run %d: %s%n", world, i, r);
        } catch (RunFailure e) {
          errors.add("world " + world + ": " + e.getMessage());
          System.err.printf("[w6] world=%d run %d: FAILED %s%n", world, i, e.getMessage());
        }
      }
      if (!errors.isEmpty()) {
        recorder.addFailure(i, errors, full);
      }
      if (!metrics.isEmpty()) {
        recorder.addRun(metrics, full);
      }
    }
    Path file = ResultWriter.write(recorder, options.outDir());
    ResultWriter.printSummary(recorder, System.out);
    System.out.println("[w6] wrote " + file);
    return file;
  }

  /** A run that did not produce its figures. */
  static final class RunFailure extends Exception {
    RunFailure(String message) {
      super(message);
    }
  }

  private static Map<String, Double> oneRun(int world, int repeat, Duration timeout, List<String> jvmArgs)
      throws InterruptedException, RunFailure {
    WorkerOutput output = new WorkerOutput(false);
    Map<String, Object> cfg = Map.of("repeat", repeat, "world", world);
    WorkerGroupSpec spec = WorkerLauncher.spec(world, W6Worker.class, cfg, timeout, jvmArgs, output)
        .pipeStdin(true)
        .build();
    W6Timeline timeline = new W6Timeline(output.lines());
    long spawn = System.nanoTime();
    long deadline = spawn + timeout.toNanos();
    try (WorkerGroup group = new WorkerGroup(spec).start()) {
      long ready = timeline.awaitAll("READY", world, deadline);
      long go = System.nanoTime();
      for (int r = 0; r < world; r++) {
        OutputStream stdin = group.process(r).getOutputStream();
        stdin.write("GO\n".getBytes(StandardCharsets.UTF_8));
        stdin.flush();
      }
      timeline.awaitAll("INIT", world, deadline);
      timeline.awaitAll("DONE", world, deadline);
      GroupResult result = group.awaitCompletion(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
      WorkerLauncher.awaitAotCache(spec);
      if (!result.succeeded()) {
        throw new RunFailure(result.summary() + " " + stderrTails(output, world));
      }
      double localInit = 0;
      double cpu = 0;
      double classes = 0;
      double jit = 0;
      for (Map<String, Object> r : output.results().values()) {
        localInit = Math.max(localInit, ((Number) r.get("init_local_s")).doubleValue());
        cpu += ((Number) r.get("init_cpu_s")).doubleValue() / world;
        classes += ((Number) r.get("init_classes_loaded")).doubleValue() / world;
        jit += ((Number) r.get("init_jit_ms")).doubleValue() / world;
      }
      Map<String, Double> out = new LinkedHashMap<>();
      out.put("init_s", (timeline.max("INIT") - go) / 1e9);
      out.put("shutdown_s", (timeline.max("DONE") - timeline.min("INIT")) / 1e9);
      out.put("total_s", (timeline.max("DONE") - go) / 1e9);
      out.put("ready_s", (ready - spawn) / 1e9);
      out.put("init_local_max_s", localInit);
      // Per worker, averaged over the group: what init costs whatever the machine's load.
      out.put("init_cpu_s_per_worker", cpu);
      out.put("init_classes_loaded_per_worker", classes);
      out.put("init_jit_ms_per_worker", jit);
      return out;
    } catch (TimeoutException e) {
      throw new RunFailure("timed out after " + timeout.toSeconds() + " s, workers killed: " + e.getMessage()
          + " " + stderrTails(output, world));
    } catch (IOException e) {
      throw new RunFailure("could not start or signal the workers: " + e.getMessage());
    }
  }

  private static String stderrTails(WorkerOutput output, int world) {
    StringBuilder b = new StringBuilder();
    for (int r = 0; r < world; r++) {
      String tail = output.stderrTail(r);
      if (!tail.isEmpty()) {
        b.append("\n  rank ").append(r).append(" stderr: ").append(tail);
      }
    }
    return b.toString();
  }
}
