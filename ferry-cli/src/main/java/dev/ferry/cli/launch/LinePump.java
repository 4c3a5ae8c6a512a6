package dev.ferry.cli.launch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies one worker output stream to a {@link LineSink}, line by line, on its own daemon thread
 * (daemon so that a worker's grandchild holding the pipe open cannot keep the launcher alive).
 */
final class LinePump implements Runnable {

  private static final Logger log = LoggerFactory.getLogger(LinePump.class);

  private final int rank;
  private final WorkerStream stream;
  private final InputStream input;
  private final Charset charset;
  private final LineSink sink;
  private final Thread thread;

  private LinePump(int rank, WorkerStream stream, InputStream input, Charset charset, LineSink sink) {
    this.rank = rank;
    this.stream = stream;
    this.input = input;
    this.charset = charset;
    this.sink = sink;
    this.thread = new Thread(this, "ferry-rank" + rank + "-" + stream.name().toLowerCase());
    thread.setDaemon(true);
  }

  /** Starts pumping {@code input} and returns the running pump. */
  static LinePump start(int rank, WorkerStream stream, InputStream input, Charset charset, LineSink sink) {
    LinePump pump = new LinePump(rank, stream, input, charset, sink);
    pump.thread.start();
    return pump;
  }

  @Override
  public void run() {
    boolean sinkBroken = false;
    try (BufferedReader reader = new BufferedReader(new InputStreamReader(input, charset))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (sinkBroken || AotCache.isTrainingReport(line)) {
          continue; // keep draining, or the worker would block on a full pipe
        }
        try {
          sink.accept(rank, stream, line);
        } catch (RuntimeException e) {
          sinkBroken = true;
          log.warn("rank {} {}: line sink failed; discarding the rest of this stream", rank, stream, e);
        }
      }
    } catch (IOException e) {
      // The pipe is closed under us when the group is closed while the worker still writes.
      log.debug("rank {} {}: stopped reading: {}", rank, stream, e.toString());
    }
  }

  /** Waits up to {@code timeout} for the stream to reach its end; returns whether it did. */
  boolean awaitEnd(Duration timeout) throws InterruptedException {
    return thread.join(timeout);
  }
}
