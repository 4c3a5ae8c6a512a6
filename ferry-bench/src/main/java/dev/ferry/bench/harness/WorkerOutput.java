package dev.ferry.bench.harness;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.cli.launch.ConsoleLineSink;
import dev.ferry.cli.launch.LineSink;
import dev.ferry.cli.launch.WorkerStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Receives the output of a group of benchmark workers. On stdout a worker reports with lines
 * {@code RESULT <json object>} (the last one of each rank counts, as in common.py) and, for
 * {@code W6}, protocol lines such as {@code READY}; every stdout line is also queued with the
 * {@link System#nanoTime()} of its arrival in the driver, which is how W6 times events of
 * different JVMs on one clock. Stderr is forwarded to the console with a {@code [rank]} prefix,
 * and its last lines per rank are kept for failure reports.
 *
 * <p>Thread-safe: the launcher calls {@link #accept} from one thread per worker stream.
 */
public final class WorkerOutput implements LineSink {

  /** A stdout line and the driver's {@code System.nanoTime()} when it arrived. */
  public record TimedLine(int rank, String line, long arrivalNanos) {}

  private static final String RESULT_PREFIX = "RESULT ";
  private static final int STDERR_TAIL_LINES = 30;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ConsoleLineSink console = ConsoleLineSink.prefixed();
  private final boolean echoStdout;
  private final Map<Integer, Map<String, Object>> results = new TreeMap<>();
  private final Map<Integer, Deque<String>> stderrTails = new TreeMap<>();
  private final BlockingQueue<TimedLine> lines = new LinkedBlockingQueue<>();

  /** Output that echoes the workers' stdout lines other than results to the console. */
  public WorkerOutput() {
    this(true);
  }

  /**
   * @param echoStdout whether stdout lines other than results go to the console too; W6 turns
   *     it off, its protocol lines are only noise there
   */
  public WorkerOutput(boolean echoStdout) {
    this.echoStdout = echoStdout;
  }

  @Override
  public void accept(int rank, WorkerStream stream, String line) {
    long now = System.nanoTime();
    if (stream == WorkerStream.STDERR) {
      console.accept(rank, stream, line);
      synchronized (stderrTails) {
        Deque<String> tail = stderrTails.computeIfAbsent(rank, r -> new ArrayDeque<>());
        tail.addLast(line);
        if (tail.size() > STDERR_TAIL_LINES) {
          tail.removeFirst();
        }
      }
      return;
    }
    lines.add(new TimedLine(rank, line, now));
    if (line.startsWith(RESULT_PREFIX)) {
      try {
        Map<String, Object> parsed = JSON.readValue(line.substring(RESULT_PREFIX.length()), new TypeReference<>() {});
        synchronized (results) {
          results.put(rank, parsed);
        }
      } catch (Exception e) {
        console.accept(rank, WorkerStream.STDERR, "unparsable result line: " + line);
      }
    } else if (echoStdout) {
      console.accept(rank, stream, line);
    }
  }

  /** The last {@code RESULT} of each rank that reported one, by rank. */
  public Map<Integer, Map<String, Object>> results() {
    synchronized (results) {
      return new TreeMap<>(results);
    }
  }

  /** Stdout lines in order of arrival; W6 takes its protocol lines from here. */
  public BlockingQueue<TimedLine> lines() {
    return lines;
  }

  /** The last stderr lines of {@code rank}, joined with newlines, for an error report. */
  public String stderrTail(int rank) {
    synchronized (stderrTails) {
      Deque<String> tail = stderrTails.get(rank);
      return tail == null ? "" : String.join("\n", new ArrayList<>(tail));
    }
  }

  /** Ranks {@code 0 .. world-1} that have not reported a result. */
  public List<Integer> missing(int world) {
    Map<Integer, Map<String, Object>> r = results();
    List<Integer> out = new ArrayList<>();
    for (int rank = 0; rank < world; rank++) {
      if (!r.containsKey(rank)) {
        out.add(rank);
      }
    }
    return out;
  }
}
