package dev.ferry.cli.launch;

import java.io.PrintStream;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * Prints worker lines to a pair of streams, by default the launcher's {@code System.out} and
 * {@code System.err}, each line prefixed with the worker's rank as in torchrun's
 * {@code --tee}/prefix output:
 *
 * <pre>
 * [0] hello from rank 0 of 3
 * [2] hello from rank 2 of 3
 * [1] hello from rank 1 of 3
 * </pre>
 *
 * <p>In a multi-node launch the prefix names the node and the global rank, {@code [node1/worker5]}
 * ({@link #labelled}).
 *
 * <p>Each line is written with a single {@code print} call and flushed, so lines of different
 * workers never interleave within a line. This class is thread-safe.
 */
public final class ConsoleLineSink implements LineSink {

  private final PrintStream out;
  private final PrintStream err;
  private final IntFunction<String> label; // null: no prefix

  private ConsoleLineSink(PrintStream out, PrintStream err, IntFunction<String> label) {
    this.out = Objects.requireNonNull(out, "out");
    this.err = Objects.requireNonNull(err, "err");
    this.label = label;
  }

  /** Prints to {@code System.out}/{@code System.err} with a {@code [rank] } prefix. */
  public static ConsoleLineSink prefixed() {
    return to(System.out, System.err, true);
  }

  /** Prints to the given streams, with a {@code [rank] } prefix when {@code prefix} is true. */
  public static ConsoleLineSink to(PrintStream out, PrintStream err, boolean prefix) {
    return new ConsoleLineSink(out, err, prefix ? Integer::toString : null);
  }

  /** Prints to the given streams, each line prefixed with {@code [label(rank)] }. */
  public static ConsoleLineSink labelled(PrintStream out, PrintStream err, IntFunction<String> label) {
    return new ConsoleLineSink(out, err, Objects.requireNonNull(label, "label"));
  }

  @Override
  public void accept(int rank, WorkerStream stream, String line) {
    PrintStream target = stream == WorkerStream.STDOUT ? out : err;
    String text = label != null ? "[" + label.apply(rank) + "] " + line + System.lineSeparator()
        : line + System.lineSeparator();
    // PrintStream serialises each call, so one print per line keeps lines whole; the explicit flush
    // matters when the stream is not in auto-flush mode (e.g. a test's ByteArrayOutputStream).
    synchronized (target) {
      target.print(text);
      target.flush();
    }
  }
}
