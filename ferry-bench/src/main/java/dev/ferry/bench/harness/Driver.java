package dev.ferry.bench.harness;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * The skeleton every launcher-based workload shares (common.py's {@code run_driver}): {@code
 * repeats} independent runs, each with fresh worker JVMs and a hard timeout; per run, the metrics
 * are extracted from what the ranks reported; then the result file is written and the summary
 * printed.
 *
 * <pre>
 * new Driver("w1_latency", params, 2, W1Worker.class, Duration.ofSeconds(180))
 *     .extract(Driver.mergeRanks(0, 1))
 *     .run(options);
 * </pre>
 *
 * <p>A run counts as successful when every rank exited with 0 and rank 0 reported; with {@link
 * #allowPartial()} a run whose rank 0 reported is kept even if another rank failed (W7's probes,
 * where a stuck shutdown is itself a result), its errors still recorded as a failure.
 */
public final class Driver {

  private final String name;
  private final Map<String, Object> params;
  private final int world;
  private final Class<?> workerMain;
  private final Duration defaultTimeout;
  private Map<String, Object> workerConfig = Map.of();
  private List<String> jvmArgs = List.of();
  private Function<Map<Integer, Map<String, Object>>, Map<String, Double>> extract = mergeRanks(0);
  private boolean allowPartial;

  /**
   * @param name result file stem, e.g. {@code w1_latency}
   * @param params the workload's parameters, recorded in the result file and passed to the workers
   * @param world number of worker JVMs per run
   * @param workerMain class whose {@code main} every worker runs
   * @param defaultTimeout hard timeout of one run
   */
  public Driver(String name, Map<String, Object> params, int world, Class<?> workerMain, Duration defaultTimeout) {
    this.name = name;
    this.params = new LinkedHashMap<>(params);
    this.world = world;
    this.workerMain = workerMain;
    this.defaultTimeout = defaultTimeout;
  }

  /** Extra worker configuration, not recorded as a parameter. */
  public Driver workerConfig(Map<String, Object> config) {
    this.workerConfig = Map.copyOf(config);
    return this;
  }

  /** JVM options of the workers, e.g. {@code -Xmx3g}. */
  public Driver jvmArgs(List<String> args) {
    this.jvmArgs = List.copyOf(args);
    return this;
  }

  /** How to turn the ranks' results into the run's flat metrics (default: rank 0's, flattened). */
  public Driver extract(Function<Map<Integer, Map<String, Object>>, Map<String, Double>> extract) {
    this.extract = extract;
    return this;
  }

  /** Keep runs whose rank 0 reported even if other ranks failed or had to be killed. */
  public Driver allowPartial() {
    this.allowPartial = true;
    return this;
  }

  /**
   * The metrics of the given ranks' results, flattened and merged in rank order; {@code
   * error_texts} (error message to count) is not a metric and stays in {@code runs_full}, where
   * report.py finds it.
   */
  public static Function<Map<Integer, Map<String, Object>>, Map<String, Double>> mergeRanks(int... ranks) {
    return results -> {
      Map<String, Double> out = new LinkedHashMap<>();
      for (int r : ranks) {
        Map<String, Object> reported = new LinkedHashMap<>(results.getOrDefault(r, Map.of()));
        reported.remove("error_texts");
        out.putAll(RunAggregate.flatten(reported));
      }
      return out;
    };
  }

  /** Runs the workload {@code options.repeats()} times and writes its result file. */
  public Path run(BenchOptions options) throws IOException, InterruptedException {
    Map<String, Object> recorded = new LinkedHashMap<>(params);
    List<String> jvm = new ArrayList<>(jvmArgs);
    jvm.addAll(options.workerJvmArgs());
    if (!options.workerJvmArgs().isEmpty()) {
      recorded.put("extra_worker_jvm_args", options.workerJvmArgs());
    }
    if (options.tcp()) {
      recorded.put("transport", "tcp");
    }
    ResultRecorder recorder = new ResultRecorder(name, recorded, options.quick());
    Duration timeout = options.timeoutOr(defaultTimeout);
    for (int i = 0; i < options.repeats(); i++) {
      Map<String, Object> cfg = new LinkedHashMap<>(params);
      cfg.putAll(workerConfig);
      cfg.put("quick", options.quick());
      cfg.put("tcp", options.tcp());
      cfg.put("repeat", i);
      WorkerLauncher.Launch launch = WorkerLauncher.run(world, workerMain, cfg, timeout, jvm);
      boolean reported = launch.results().containsKey(0);
      if (!launch.errors().isEmpty() || !reported) {
        List<String> errors = launch.errors().isEmpty()
            ? List.of("rank 0 exited without reporting a result") : launch.errors();
        recorder.addFailure(i, errors, launch.results());
        boolean kept = allowPartial && reported;
        System.err.printf("[%s] run %d: %s %s%n", name, i, kept ? "ERRORS (run kept)" : "FAILED", errors);
        if (!kept) {
          continue;
        }
      }
      Map<String, Double> metrics = extract.apply(launch.results());
      recorder.addRun(metrics, launch.results());
      System.out.printf(Locale.ROOT, "[%s] run %d (%.1f s): %s%n", name, i, launch.wallSeconds(), brief(metrics));
    }
    Path file = ResultWriter.write(recorder, options.outDir());
    ResultWriter.printSummary(recorder, System.out);
    System.out.println("[" + name + "] wrote " + file);
    return file;
  }

  /** The first few metrics of a run, rounded, for the progress line. */
  static String brief(Map<String, Double> metrics) {
    StringBuilder b = new StringBuilder("{");
    metrics.entrySet().stream().limit(6).forEach(e ->
        b.append(b.length() > 1 ? ", " : "").append(e.getKey()).append('=')
            .append(String.format(Locale.ROOT, "%.3f", e.getValue())));
    return b.append('}').toString();
  }
}
