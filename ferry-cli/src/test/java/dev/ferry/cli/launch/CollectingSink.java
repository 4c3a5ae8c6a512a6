package dev.ferry.cli.launch;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/** A {@link LineSink} that remembers every line, for assertions; can wait for a line to arrive. */
final class CollectingSink implements LineSink {

  record Line(int rank, WorkerStream stream, String text) {}

  private final ConcurrentLinkedQueue<Line> lines = new ConcurrentLinkedQueue<>();

  @Override
  public void accept(int rank, WorkerStream stream, String line) {
    lines.add(new Line(rank, stream, line));
    synchronized (this) {
      notifyAll();
    }
  }

  List<String> lines(int rank, WorkerStream stream) {
    return lines.stream().filter(l -> l.rank() == rank && l.stream() == stream).map(Line::text).toList();
  }

  /** Waits until {@code count} lines equal to {@code text} have arrived, or fails after {@code timeout}. */
  synchronized void awaitLines(String text, int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (lines.stream().filter(l -> l.text().equals(text)).count() < count) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new AssertionError("no " + count + " lines '" + text + "' within " + timeout + "; got " + lines);
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }
}
