package dev.ferry.bench.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a {@link ResultRecorder}'s document to {@code DIR/<workload>.json} ({@code
 * <workload>_quick.json} for smoke runs, so they never overwrite real results, as common.py does)
 * and prints the summary table the PyTorch scripts print.
 */
public final class ResultWriter {

  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private ResultWriter() {}

  /** Writes the result file and returns its path. */
  public static Path write(ResultRecorder recorder, Path dir) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve(recorder.workload() + (recorder.quick() ? "_quick" : "") + ".json");
    JSON.writeValue(file.toFile(), recorder.document());
    return file;
  }

  /** Prints {@code metric  median  [min .. max]  n=} lines for the runs recorded so far. */
  public static void printSummary(ResultRecorder recorder, PrintStream out) {
    Map<String, Map<String, Object>> summary = RunAggregate.aggregate(recorder.runs());
    out.printf("== %s mode=%s: median over runs [min .. max] ==%n", recorder.workload(), ResultRecorder.MODE);
    summary.forEach((k, v) -> out.printf(Locale.ROOT, "  %-40s %14.3f   [%.3f .. %.3f]  n=%d%n",
        k, (Double) v.get("median"), (Double) v.get("min"), (Double) v.get("max"), (Integer) v.get("n")));
    if (recorder.failureCount() > 0) {
      out.printf("  %d failed run(s), see 'failures' in the JSON%n", recorder.failureCount());
    }
  }
}
