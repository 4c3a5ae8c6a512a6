package dev.ferry.cli.launch;

/**
 * What a {@link WorkerGroup} does with one output stream (stdout or stderr) of its workers.
 *
 * <pre>
 * // The benchmark harness reads rank 0's stdout itself and lets stderr be forwarded:
 * WorkerGroupSpec.builder().stdout(OutputMode.PIPE).stderr(OutputMode.FORWARD)...
 * </pre>
 */
public enum OutputMode {
  /**
   * Read line by line and hand each complete line to the spec's {@link LineSink} (by default the
   * launcher's own stdout/stderr with a {@code [rank]} prefix).
   */
  FORWARD,
  /**
   * Leave the stream to the caller, who reads it from {@link WorkerGroup#process(int)}. The caller
   * must keep reading it, or the worker blocks once the pipe buffer (typically 64 KiB) is full.
   */
  PIPE,
  /** Throw the output away. */
  DISCARD
}
