package dev.ferry.cli.launch;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One started worker process of a {@link WorkerGroup}, with its output pumps and exit bookkeeping. */
final class Worker {

  private static final Logger log = LoggerFactory.getLogger(WorkerGroup.class);

  private final int rank;
  private final NodePlacement placement;
  private final String name;
  private final Process process;
  private final long groupStartNanos;
  private final List<LinePump> pumps = new ArrayList<>();
  private final CompletableFuture<Worker> exited = new CompletableFuture<>();
  private final MainThreadError mainThreadError = new MainThreadError();
  private volatile boolean stopRequested;
  private volatile long exitNanos;

  private Worker(int rank, NodePlacement placement, Process process, long groupStartNanos) {
    this.rank = rank;
    this.placement = placement;
    this.name = placement.describe(rank);
    this.process = process;
    this.groupStartNanos = groupStartNanos;
  }

  /**
   * Wraps a freshly started process: starts pumps for forwarded streams, closes stdin unless the
   * caller writes to it, and calls {@code onExit} (from a JDK thread) once the process has exited.
   */
  static Worker started(int rank, Process process, WorkerGroupSpec spec, long groupStartNanos, Consumer<Worker> onExit) {
    Worker worker = new Worker(rank, spec.placement(), process, groupStartNanos);
    if (spec.stdout() == OutputMode.FORWARD) {
      worker.pumps.add(LinePump.start(rank, WorkerStream.STDOUT, process.getInputStream(), spec.outputCharset(), spec.sink()));
    }
    if (spec.stderr() == OutputMode.FORWARD) {
      LineSink sink = spec.sink();
      LineSink observed = (r, stream, line) -> {
        worker.mainThreadError.observe(line);
        sink.accept(r, stream, line);
      };
      worker.pumps.add(LinePump.start(rank, WorkerStream.STDERR, process.getErrorStream(), spec.outputCharset(),
          observed));
    }
    if (!spec.pipeStdin()) {
      worker.closeStdin();
    }
    // Registered last: if the process is already gone the callback runs right here, and it must
    // see the worker fully set up.
    process.onExit().thenRun(() -> worker.recordExit(onExit));
    return worker;
  }

  private void recordExit(Consumer<Worker> onExit) {
    exitNanos = System.nanoTime();
    Duration elapsed = Elapsed.since(groupStartNanos, exitNanos);
    int code = process.exitValue();
    if (stopRequested && endedBySignal(code)) {
      log.info("{} (pid {}) stopped, exit code {}, after {}", name, process.pid(), code, Elapsed.format(elapsed));
    } else if (code == 0) {
      log.info("{} (pid {}) exited with code 0 after {}", name, process.pid(), Elapsed.format(elapsed));
    } else {
      log.warn("{} (pid {}) exited with code {} after {}", name, process.pid(), code, Elapsed.format(elapsed));
    }
    // Completed only after exitNanos is recorded, so whoever waits on it sees it.
    exited.complete(this);
    onExit.accept(this);
  }

  int rank() {
    return rank;
  }

  /** How the launcher's reports name this worker: {@link NodePlacement#describe}. */
  String name() {
    return name;
  }

  /** Where this worker's node sits in the world. */
  NodePlacement placement() {
    return placement;
  }

  Process process() {
    return process;
  }

  CompletableFuture<Worker> exited() {
    return exited;
  }

  boolean hasExited() {
    return exited.isDone();
  }

  boolean stopRequested() {
    return stopRequested;
  }

  /** Marks the worker as stopped by the launcher; call before signalling it. */
  void markStopRequested() {
    stopRequested = true;
  }

  /** {@link System#nanoTime()} at exit; only valid once {@link #hasExited()}. */
  long exitNanos() {
    return exitNanos;
  }

  /** Exit code; only valid once {@link #hasExited()}. */
  int exitCode() {
    return process.exitValue();
  }

  /**
   * The result, or a {@link WorkerResult#NOT_EXITED} result if the process is somehow still alive.
   * Call it once the output has drained ({@link #awaitOutput}), so that the main thread's error is in.
   */
  WorkerResult result() {
    if (!hasExited()) {
      return new WorkerResult(rank, process.pid(), WorkerResult.NOT_EXITED,
          Elapsed.since(groupStartNanos, System.nanoTime()), stopRequested, mainThreadError.error());
    }
    int code = process.exitValue();
    String error = mainThreadError.error();
    return new WorkerResult(rank, process.pid(), code, Elapsed.since(groupStartNanos, exitNanos),
        stopRequested && endedBySignal(code) && error == null, error);
  }

  /**
   * Whether an exit code is what the launcher's SIGTERM or SIGKILL makes of a JVM. A worker that
   * was signalled but exits with another code was already exiting on its own. One that was
   * signalled while its shutdown hooks ran after its main had thrown may exit with either code
   * (the JVM's signal handler and its exit race), so {@link #result} counts the printed error too.
   */
  private static boolean endedBySignal(int code) {
    return code == 128 + 15 || code == 128 + 9;
  }

  /** Waits, up to the deadline, for forwarded output to be fully delivered. */
  void awaitOutput(long deadlineNanos) throws InterruptedException {
    for (LinePump pump : pumps) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0 || !pump.awaitEnd(Duration.ofNanos(left))) {
        log.debug("{}: output still open (a child process may hold the pipe); not waiting", name);
        return;
      }
    }
  }

  void closeStdin() {
    try {
      process.getOutputStream().close();
    } catch (IOException e) {
      log.debug("{}: closing stdin failed: {}", name, e.toString());
    }
  }
}
