package dev.ferry.bench.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns per-run results into the per-metric summary of a result file: for every metric, the
 * median over the runs (mean of the two middle values for an even count) and the [min .. max]
 * over the runs, as {@code {"median", "min", "max", "n"}} (common.py's {@code aggregate}).
 *
 * <p>Stateless and thread-safe.
 */
public final class RunAggregate {

  private RunAggregate() {}

  /**
   * Flattens nested maps to dotted keys ({@code {"w8": {"calls_per_s": 1.0}}} becomes
   * {@code "w8.calls_per_s"}), keeping numeric leaves only, as common.py's {@code flatten}:
   * strings, booleans and lists are not metrics.
   */
  public static Map<String, Double> flatten(Map<String, ?> nested) {
    Map<String, Double> out = new LinkedHashMap<>();
    flattenInto("", nested, out);
    return out;
  }

  private static void flattenInto(String prefix, Map<String, ?> nested, Map<String, Double> out) {
    for (Map.Entry<String, ?> e : nested.entrySet()) {
      String key = prefix + e.getKey();
      Object v = e.getValue();
      if (v instanceof Map<?, ?> m) {
        @SuppressWarnings("unchecked")
        Map<String, ?> child = (Map<String, ?>) m;
        flattenInto(key + ".", child, out);
      } else if (v instanceof Number n) {
        out.put(key, n.doubleValue());
      }
    }
  }

  /**
   * The summary over runs: metric to {@code {median, min, max, n}}, metrics in order of first
   * appearance; a metric missing from some runs is summarised over the runs that have it.
   */
  public static Map<String, Map<String, Object>> aggregate(List<Map<String, Double>> runs) {
    Set<String> keys = new LinkedHashSet<>();
    runs.forEach(r -> keys.addAll(r.keySet()));
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    for (String key : keys) {
      List<Double> values = new ArrayList<>();
      for (Map<String, Double> run : runs) {
        Double v = run.get(key);
        if (v != null) {
          values.add(v);
        }
      }
      double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("median", Stats.median(a));
      s.put("min", values.stream().mapToDouble(Double::doubleValue).min().orElseThrow());
      s.put("max", values.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
      s.put("n", a.length);
      out.put(key, s);
    }
    return out;
  }
}
