package dev.ferry.cli.launch;

/**
 * Receives the forwarded output of workers, one complete line at a time.
 *
 * <p>A line never contains its terminator ({@code \n}, {@code \r\n} or {@code \r}); a last line
 * that a worker did not terminate is still delivered, when the worker closes the stream. Lines of
 * one rank and stream arrive in order, from one thread; lines of different ranks or streams arrive
 * concurrently from different threads, so implementations must be thread-safe. A sink must not
 * block for long: while it does, the worker that wrote the line may block on a full pipe.
 *
 * <pre>
 * LineSink collect = (rank, stream, line) -&gt; lines.add(rank + ":" + line); // lines is thread-safe
 * WorkerGroupSpec.builder().sink(collect)...
 * </pre>
 *
 * @see ConsoleLineSink the default, which prints lines prefixed with {@code [rank]}
 */
@FunctionalInterface
public interface LineSink {

  /** Accepts one line that worker {@code rank} wrote to {@code stream}. */
  void accept(int rank, WorkerStream stream, String line);
}
