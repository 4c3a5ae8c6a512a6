package dev.ferry.cli.launch;

/** Which output stream of a worker a line came from. */
public enum WorkerStream {
  /** The worker's {@code System.out}. */
  STDOUT,
  /** The worker's {@code System.err}. */
  STDERR
}
