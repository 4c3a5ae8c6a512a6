package dev.ferry.cli;

import java.io.PrintStream;

/**
 * Shutdown hook of {@code ferry run}: Ctrl-C or SIGTERM on the launcher stops its workers, which
 * would otherwise keep running as orphans. Removed again when the group ends normally.
 */
final class StopWorkersOnShutdown extends Thread {

  private final Runnable stop;
  private final PrintStream err;

  /** @param stop stops the workers: a {@code WorkerGroup}'s or a {@code MultiNodeRun}'s close */
  StopWorkersOnShutdown(Runnable stop, PrintStream err) {
    super("ferry-run-shutdown");
    this.stop = stop;
    this.err = err;
  }

  @Override
  public void run() {
    err.println("ferry run: the launcher is shutting down; stopping the workers");
    stop.run();
  }

  /** Registers this hook; {@link #unregister()} undoes it. */
  void register() {
    Runtime.getRuntime().addShutdownHook(this);
  }

  /** Unregisters this hook, unless the JVM is already shutting down (then it is running or has run). */
  void unregister() {
    try {
      Runtime.getRuntime().removeShutdownHook(this);
    } catch (IllegalStateException e) {
      // Shutdown in progress: nothing to undo.
    }
  }
}
