package dev.ferry.bench.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Collects the runs of one workload and builds its result document in the shape of {@code
 * bench/WORKLOADS.md} ("Output"), with the single mode {@link #MODE}:
 *
 * <pre>
 * {"workload": "w1_latency", "params": {...}, "quick": false,
 *  "env": {"date_utc", "loadavg_start", "loadavg_end", ...},
 *  "summary": {"java": {metric: {"median", "min", "max", "n"}}},
 *  "runs": {"java": [{metric: value}, ...]},          one flat map per successful run
 *  "runs_full": {"java": [{rank: {...}}, ...]},       what each rank reported, per run
 *  "failures": {"java": [{"repeat", "errors", ...}]}}
 * </pre>
 *
 * <p>Not thread-safe: one driver thread records its runs in order.
 */
public final class ResultRecorder {

  /** The mode name of Ferry's results, the column label in report.py. */
  public static final String MODE = "java";

  private final String workload;
  private final Map<String, Object> params;
  private final boolean quick;
  private final Map<String, Object> env = EnvInfo.capture();
  private final List<Map<String, Double>> runs = new ArrayList<>();
  private final List<Object> runsFull = new ArrayList<>();
  private final List<Map<String, Object>> failures = new ArrayList<>();

  /** Starts recording; the environment (and start load average) is captured now. */
  public ResultRecorder(String workload, Map<String, Object> params, boolean quick) {
    this.workload = workload;
    this.params = new LinkedHashMap<>(params);
    this.quick = quick;
  }

  /** The workload's file name stem, e.g. {@code w1_latency}. */
  public String workload() {
    return workload;
  }

  /** Whether this is a smoke-test run with reduced counts. */
  public boolean quick() {
    return quick;
  }

  /** Records a successful run: its flat metrics and, for the record, what each rank reported. */
  public void addRun(Map<String, Double> metrics, Object full) {
    runs.add(new LinkedHashMap<>(metrics));
    runsFull.add(full);
  }

  /** Records a failed run (it does not enter the summary). */
  public void addFailure(int repeat, List<String> errors, Object partial) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("repeat", repeat);
    f.put("errors", List.copyOf(errors));
    f.put("partial", partial);
    failures.add(f);
  }

  /** The successful runs' metrics so far. */
  public List<Map<String, Double>> runs() {
    return List.copyOf(runs);
  }

  /** Number of failed runs so far. */
  public int failureCount() {
    return failures.size();
  }

  /** The result document; {@code loadavg_end} is read now. */
  public Map<String, Object> document() {
    Map<String, Object> envNow = new LinkedHashMap<>(env);
    envNow.put("loadavg_end", EnvInfo.loadAverage());
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("workload", workload);
    doc.put("params", params);
    doc.put("quick", quick);
    doc.put("env", envNow);
    doc.put("summary", runs.isEmpty() ? Map.of() : Map.of(MODE, RunAggregate.aggregate(runs)));
    doc.put("runs", Map.of(MODE, runs));
    doc.put("runs_full", Map.of(MODE, runsFull));
    doc.put("failures", Map.of(MODE, failures));
    return doc;
  }
}
