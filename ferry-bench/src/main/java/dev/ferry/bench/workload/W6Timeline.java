package dev.ferry.bench.workload;

import dev.ferry.bench.harness.WorkerOutput.TimedLine;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The W6 protocol lines of one run ({@code READY}, {@code INIT}, {@code DONE}) by rank, with the
 * driver-clock time each arrived. Not thread-safe: the driver thread polls it.
 */
final class W6Timeline {

  private final BlockingQueue<TimedLine> lines;
  private final Map<String, Map<Integer, Long>> events = new HashMap<>();

  W6Timeline(BlockingQueue<TimedLine> lines) {
    this.lines = lines;
  }

  /**
   * Waits until each of {@code world} ranks has sent {@code tag}, recording any other lines that
   * arrive meanwhile; returns the latest arrival.
   *
   * @throws TimeoutException if {@code deadlineNanos} (driver clock) passes first
   */
  long awaitAll(String tag, int world, long deadlineNanos) throws InterruptedException, TimeoutException {
    while (ranksWith(tag).size() < world) {
      long left = deadlineNanos - System.nanoTime();
      // Past the deadline, lines already queued still count; only waiting stops.
      TimedLine line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : lines.poll();
      if (line == null) {
        throw new TimeoutException(ranksWith(tag).size() + " of " + world + " ranks sent " + tag
            + " before the deadline (seen so far: " + events + ")");
      }
      events.computeIfAbsent(line.line().strip(), k -> new HashMap<>()).putIfAbsent(line.rank(), line.arrivalNanos());
    }
    return max(tag);
  }

  long max(String tag) {
    return ranksWith(tag).values().stream().mapToLong(Long::longValue).max().orElseThrow();
  }

  long min(String tag) {
    return ranksWith(tag).values().stream().mapToLong(Long::longValue).min().orElseThrow();
  }

  private Map<Integer, Long> ranksWith(String tag) {
    return events.getOrDefault(tag, Map.of());
  }
}
