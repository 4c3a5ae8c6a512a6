package dev.ferry.cli.launch;

/**
 * Spots, in a worker's stderr, the line with which the JVM reports the exception that ended the
 * program's main thread ({@code Exception in thread "main" java.lang.IllegalStateException: ...}),
 * so that a failed group's summary can show each rank's error next to its exit code: when several
 * ranks fail at once (the others fail because one did), the rank that exited first is often not the
 * one whose program failed, and the errors side by side tell them apart.
 *
 * <p>Only the first such line is kept, cut to {@link #MAX_LENGTH} characters. Thread-safe: the
 * stderr pump writes, the launcher reads.
 */
final class MainThreadError {

  /** Longer messages are cut, with an ellipsis: one summary line stays readable. */
  static final int MAX_LENGTH = 300;

  private static final String PREFIX = "Exception in thread \"main\" ";

  private volatile String error;

  /** Looks at one line the worker wrote to stderr. */
  void observe(String line) {
    if (error == null && line.startsWith(PREFIX)) {
      String rest = line.substring(PREFIX.length()).strip();
      error = rest.length() <= MAX_LENGTH ? rest : rest.substring(0, MAX_LENGTH - 1) + "…";
    }
  }

  /** The error after {@code Exception in thread "main" }, or null if none was seen. */
  String error() {
    return error;
  }
}
