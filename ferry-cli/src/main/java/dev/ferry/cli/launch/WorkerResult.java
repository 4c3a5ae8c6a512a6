package dev.ferry.cli.launch;

import java.time.Duration;
import java.util.Optional;

/**
 * How one worker ended.
 *
 * <pre>
 * WorkerResult r = result.workers().get(1);
 * if (!r.succeeded() &amp;&amp; !r.stoppedByLauncher()) {
 *   System.err.println("rank " + r.rank() + " failed with exit code " + r.exitCode());
 * }
 * </pre>
 *
 * @param rank the worker's rank
 * @param pid the worker's process id
 * @param exitCode the process exit code ({@code 128+n} when killed by signal {@code n} on Unix),
 *     or {@link #NOT_EXITED} if the worker could not be stopped at all
 * @param elapsed time from the start of the group to the worker's exit
 * @param stoppedByLauncher whether the launcher's signal ended the worker (because another rank
 *     failed, the group timed out or was closed), so its exit code is a consequence, not a cause; a
 *     worker that was signalled while already failing (its main had thrown, or it exits with a code
 *     of its own) counts as failed on its own
 * @param mainThreadError the exception that ended the program's main thread, as the JVM printed it
 *     on the worker's stderr without {@code Exception in thread "main" }, or null if none was seen
 *     (stderr not {@link OutputMode#FORWARD forwarded}, or the program ended otherwise)
 */
public record WorkerResult(int rank, long pid, int exitCode, Duration elapsed, boolean stoppedByLauncher,
    String mainThreadError) {

  /** {@link #exitCode()} of a worker that survived even SIGKILL (e.g. stuck in the kernel). */
  public static final int NOT_EXITED = -1;

  /** Whether the worker exited with code 0. */
  public boolean succeeded() {
    return exitCode == 0;
  }

  /** Whether the worker exited with a non-zero code that the launcher's signal did not cause. */
  public boolean failedOnItsOwn() {
    return exitCode != 0 && exitCode != NOT_EXITED && !stoppedByLauncher;
  }

  /** {@link #mainThreadError()}, if the JVM printed one. */
  public Optional<String> error() {
    return Optional.ofNullable(mainThreadError);
  }

  /**
   * One line such as {@code rank 1 (pid 4242): exit code 1 after 0.81 s: java.lang.IllegalStateException:
   * no shard}, the error shown when the worker failed on its own and the JVM printed one.
   */
  public String describe() {
    String end = exitCode == NOT_EXITED ? "still running" : "exit code " + exitCode + signalNote();
    String error = failedOnItsOwn() && mainThreadError != null ? ": " + mainThreadError : "";
    return "rank " + rank + " (pid " + pid + "): " + end + " after " + Elapsed.format(elapsed)
        + (stoppedByLauncher ? " (stopped by the launcher)" : "") + error;
  }

  /**
   * The signal an exit code above 128 stands for, as {@code " (SIGKILL)"}; for a SIGKILL the
   * launcher did not send, who usually sends it: a worker that vanishes with 137 and no error was
   * most often killed by the kernel for want of memory.
   */
  String signalNote() {
    String name = switch (exitCode - 128) {
      case 1 -> "SIGHUP";
      case 2 -> "SIGINT";
      case 3 -> "SIGQUIT";
      case 4 -> "SIGILL";
      case 6 -> "SIGABRT";
      case 7 -> "SIGBUS";
      case 8 -> "SIGFPE";
      case 9 -> "SIGKILL";
      case 11 -> "SIGSEGV";
      case 13 -> "SIGPIPE";
      case 15 -> "SIGTERM";
      default -> null;
    };
    if (name == null) {
      return "";
    }
    return name.equals("SIGKILL") && !stoppedByLauncher
        ? " (SIGKILL from outside the launcher: the kernel's out-of-memory killer, or kill -9)"
        : " (" + name + ")";
  }
}
