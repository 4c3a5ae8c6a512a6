package dev.ferry.cli.launch;

import java.time.Duration;

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
 * @param stoppedByLauncher whether the worker was still running when the launcher stopped it
 *     (because another rank failed, the group timed out or was closed), so its exit code is a
 *     consequence, not a cause
 */
public record WorkerResult(int rank, long pid, int exitCode, Duration elapsed, boolean stoppedByLauncher) {

  /** {@link #exitCode()} of a worker that survived even SIGKILL (e.g. stuck in the kernel). */
  public static final int NOT_EXITED = -1;

  /** Whether the worker exited with code 0. */
  public boolean succeeded() {
    return exitCode == 0;
  }

  /** One line such as {@code rank 1 (pid 4242): exit code 3 after 0.81 s}. */
  public String describe() {
    String end = exitCode == NOT_EXITED ? "still running" : "exit code " + exitCode;
    return "rank " + rank + " (pid " + pid + "): " + end + " after " + Elapsed.format(elapsed)
        + (stoppedByLauncher ? " (stopped by the launcher)" : "");
  }
}
