package dev.ferry.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * The Ferry events of a Flight Recorder file, summed per function: the calls workers made
 * ({@code dev.ferry.rpc.Call}, by function and caller → callee, Ferry's own calls apart) and the
 * requests they ran ({@code dev.ferry.rpc.Request}, by function and caller). Read in one pass,
 * keeping each row's durations for its percentiles. Immutable once read.
 *
 * <pre>
 * JfrSummary summary = JfrSummary.read(Path.of("worker0.jfr"));
 * System.out.print(summary.table());
 * </pre>
 */
final class JfrSummary {
  static final String CALL = "dev.ferry.rpc.Call";
  static final String REQUEST = "dev.ferry.rpc.Request";
  private static final String[] HEADERS = {"Name", "# of Calls", "Failures", "Total", "Mean", "p50", "p99", "Max",
      "Request bytes"};

  private final Map<String, Row> calls;
  private final Map<String, Row> requests;
  private final long events;

  private JfrSummary(Map<String, Row> calls, Map<String, Row> requests, long events) {
    this.calls = calls;
    this.requests = requests;
    this.events = events;
  }

  /** One function's events. */
  static final class Row {
    final String name;
    long count;
    long failures;
    long bytes;
    long[] nanos = new long[16];

    Row(String name) {
      this.name = name;
    }

    void add(Duration duration, boolean ok, long requestBytes) {
      if (count == nanos.length) {
        nanos = Arrays.copyOf(nanos, nanos.length * 2);
      }
      nanos[(int) count++] = duration.toNanos();
      failures += ok ? 0 : 1;
      bytes += requestBytes;
    }

    long total() {
      long sum = 0;
      for (int i = 0; i < count; i++) {
        sum += nanos[i];
      }
      return sum;
    }

    /** By nearest rank, as the agents' debug info reports its percentiles. */
    long percentile(double quantile) {
      long[] sorted = Arrays.copyOf(nanos, (int) count);
      Arrays.sort(sorted);
      return sorted[(int) Math.max(0, Math.ceil(quantile * count) - 1)];
    }
  }

  static JfrSummary read(Path file) throws IOException {
    return read(List.of(file));
  }

  /**
   * One table over several recordings: each worker of a group writes its own (filename=worker-%p.jfr).
   *
   * @throws Unreadable naming the first file that is not a readable recording
   */
  static JfrSummary read(List<Path> files) throws Unreadable {
    Map<String, Row> calls = new LinkedHashMap<>();
    Map<String, Row> requests = new LinkedHashMap<>();
    long events = 0;
    for (Path file : files) {
      try {
        events += read(file, calls, requests);
      } catch (IOException | RuntimeException e) {
        throw new Unreadable(file, e);
      }
    }
    return new JfrSummary(calls, requests, events);
  }

  /** A file that is not a readable Flight Recorder recording, and why. */
  static final class Unreadable extends IOException {
    private final Path file;

    Unreadable(Path file, Exception cause) {
      super(cause.getMessage(), cause);
      this.file = file;
    }

    Path file() {
      return file;
    }
  }

  private static long read(Path file, Map<String, Row> calls, Map<String, Row> requests) throws IOException {
    long events = 0;
    try (RecordingFile recording = new RecordingFile(file)) {
      while (recording.hasMoreEvents()) {
        RecordedEvent event = recording.readEvent();
        String type = event.getEventType().getName();
        if (type.equals(CALL)) {
          events++;
          String key = (event.getBoolean("system") ? "(ferry) " : "") + "rpc#" + event.getString("function") + "("
              + event.getString("caller") + " -> " + event.getString("callee") + ")";
          calls.computeIfAbsent(key, Row::new).add(event.getDuration(), "ok".equals(event.getString("outcome")),
              event.getLong("requestBytes"));
        } else if (type.equals(REQUEST)) {
          events++;
          String key = event.getString("function") + " (from " + event.getString("caller") + ")";
          requests.computeIfAbsent(key, Row::new).add(event.getDuration(), "ok".equals(event.getString("outcome")),
              event.getLong("requestBytes"));
        }
      }
    }
    return events;
  }

  Map<String, Row> calls() {
    return calls;
  }

  Map<String, Row> requests() {
    return requests;
  }

  /** Both tables, by total time; a line saying there were no Ferry events when there were none. */
  String table() {
    if (events == 0) {
      return "No Ferry events (" + CALL + ", " + REQUEST + ") in this recording.\n";
    }
    StringBuilder out = new StringBuilder();
    if (!calls.isEmpty()) {
      out.append("Calls made (").append(CALL).append("), as their callers timed them:\n")
          .append(format(calls.values()));
    }
    if (!requests.isEmpty()) {
      out.append(out.isEmpty() ? "" : "\n").append("Requests run (").append(REQUEST)
          .append("), as their callees timed them:\n").append(format(requests.values()));
    }
    return out.append(events).append(" events\n").toString();
  }

  private static String format(java.util.Collection<Row> rows) {
    List<Row> sorted = new ArrayList<>(rows);
    sorted.sort(Comparator.comparingLong(Row::total).reversed());
    List<String[]> cells = new ArrayList<>();
    for (Row row : sorted) {
      cells.add(new String[] {row.name, Long.toString(row.count), Long.toString(row.failures), time(row.total()),
          time(row.total() / row.count), time(row.percentile(0.5)), time(row.percentile(0.99)),
          time(row.percentile(1.0)), Long.toString(row.bytes)});
    }
    int[] widths = new int[HEADERS.length];
    for (int i = 0; i < HEADERS.length; i++) {
      widths[i] = HEADERS[i].length();
      for (String[] line : cells) {
        widths[i] = Math.max(widths[i], line[i].length());
      }
    }
    StringBuilder out = new StringBuilder();
    StringBuilder rule = new StringBuilder();
    for (int i = 0; i < widths.length; i++) {
      rule.append(i == 0 ? "" : "  ").append("-".repeat(widths[i]));
    }
    rule.append('\n');
    out.append(rule);
    appendLine(out, HEADERS, widths);
    out.append(rule);
    for (String[] line : cells) {
      appendLine(out, line, widths);
    }
    return out.append(rule).toString();
  }

  private static void appendLine(StringBuilder out, String[] cells, int[] widths) {
    for (int i = 0; i < cells.length; i++) {
      String pad = " ".repeat(widths[i] - cells[i].length());
      out.append(i == 0 ? cells[i] + pad : "  " + pad + cells[i]);
    }
    out.append('\n');
  }

  private static String time(long nanos) {
    if (nanos >= 1_000_000_000L) {
      return String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
    }
    return nanos >= 1_000_000L ? String.format(Locale.ROOT, "%.3fms", nanos / 1e6)
        : String.format(Locale.ROOT, "%.3fus", nanos / 1e3);
  }
}
