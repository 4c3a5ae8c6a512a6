package dev.ferry.bench.harness;

import dev.ferry.cli.launch.AotCache;
import dev.ferry.cli.launch.GroupResult;
import dev.ferry.cli.launch.OutputMode;
import dev.ferry.cli.launch.WorkerGroup;
import dev.ferry.cli.launch.WorkerGroupSpec;
import dev.ferry.cli.launch.WorkerResult;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Starts one run of a workload: {@code world} fresh worker JVMs of one main class, through
 * ferry-cli's launcher, each given the run's configuration as {@code key=value} arguments (see
 * {@link WorkerContext}; values are scalars). Waits at most the run's timeout, then stops every worker of the run that is
 * still alive (the launcher's SIGTERM, then SIGKILL; only processes this run started).
 */
public final class WorkerLauncher {

  /** What one run produced: each rank's last result, the wall time and what went wrong. */
  public record Launch(Map<Integer, Map<String, Object>> results, double wallSeconds, List<String> errors) {}


  // Ferry logs at INFO; a benchmark run only needs warnings and errors on the console.
  private static final String QUIET_LOGS = "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn";
  // Without a date format: slf4j-simple's SimpleDateFormat enumerates every locale the JDK knows
  // (~100 ms of start-up work and compilations that spill into what workers measure); the
  // driver's console shows which run a line came from.
  /** The longest a run waits for the AOT cache it trained to be saved. */
  private static final Duration AOT_SAVE_TIMEOUT = Duration.ofMinutes(2);
  private static final String NO_LOG_DATES = "-Dorg.slf4j.simpleLogger.showDateTime=false";

  private WorkerLauncher() {}

  /**
   * The launcher spec of a run: this JVM's class path, the worker's configuration (plus {@code
   * alarm_s}, the worker's own deadline, 10 s after the driver's) as {@code key=value} arguments, stdout
   * and stderr to {@code output}.
   */
  public static WorkerGroupSpec.Builder spec(int world, Class<?> workerMain, Map<String, Object> config,
      Duration timeout, List<String> jvmArgs, WorkerOutput output) {
    Map<String, Object> cfg = new LinkedHashMap<>(config);
    cfg.put("alarm_s", timeout.toSeconds() + 10);
    List<String> jvm = new ArrayList<>(jvmArgs);
    jvm.add(QUIET_LOGS);
    jvm.add(NO_LOG_DATES);
    return WorkerGroupSpec.builder()
        .nproc(world)
        .mainClass(workerMain.getName())
        .args(cfg.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList())
        .classpath(System.getProperty("java.class.path"))
        .jvmArgs(jvm)
        .stdout(OutputMode.FORWARD)
        .stderr(OutputMode.FORWARD)
        .sink(output)
        .terminationGrace(Duration.ofSeconds(2))
        // As 'ferry run' does: the first run of a workload trains the cache, later ones start warm
        // (FERRY_AOT_CACHE=0 turns it off; FERRY_EAGER_JIT=1 compiles from it eagerly).
        .aotCache(AotCache.defaultDirectory().map(AotCache::in).filter(AotCache::supported)
            .map(cache -> cache.withEagerCompilation(AotCache.eagerCompilationFromEnvironment())).orElse(null));
  }

  /** Runs the workers to completion or until {@code timeout}, and collects their results. */
  public static Launch run(int world, Class<?> workerMain, Map<String, Object> config, Duration timeout,
      List<String> jvmArgs) throws InterruptedException {
    WorkerOutput output = new WorkerOutput();
    WorkerGroupSpec spec = spec(world, workerMain, config, timeout, jvmArgs, output).build();
    long t0 = System.nanoTime();
    List<String> errors = new ArrayList<>();
    try (WorkerGroup group = new WorkerGroup(spec).start()) {
      GroupResult result = group.awaitCompletion(timeout);
      errors.addAll(describeFailures(result, output, timeout));
      awaitAotCache(spec);
    } catch (IOException e) {
      errors.add("could not start workers: " + e.getMessage());
    }
    return new Launch(output.results(), (System.nanoTime() - t0) / 1e9, errors);
  }

  /**
   * Waits (bounded) for the AOT cache a finished run of {@code spec} trained, which the launcher
   * saves in the background: the next run should start from it, and not be timed while the saving
   * takes a core. A cache not saved by then is no error of the workload: the next run starts cold.
   */
  public static void awaitAotCache(WorkerGroupSpec spec) throws InterruptedException {
    if (spec.aotCache().isPresent()) {
      spec.aotCache().get().awaitSaved(AOT_SAVE_TIMEOUT);
    }
  }

  /** One error per rank that did not exit with 0, with its last stderr lines. */
  static List<String> describeFailures(GroupResult result, WorkerOutput output, Duration timeout) {
    List<String> errors = new ArrayList<>();
    if (result.outcome() == GroupResult.Outcome.TIMED_OUT) {
      errors.add("timed out after " + timeout.toSeconds() + " s; workers killed: " + result.headline());
    }
    for (WorkerResult w : result.workers()) {
      if (!w.succeeded()) {
        errors.add(w.describe() + (w.stoppedByLauncher() ? "" : ": " + output.stderrTail(w.rank())));
      }
    }
    return errors;
  }
}
