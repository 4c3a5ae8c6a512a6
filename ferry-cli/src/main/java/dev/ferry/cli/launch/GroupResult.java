package dev.ferry.cli.launch;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * How a {@link WorkerGroup} ended: the outcome, the first failing rank if any, and one {@link
 * WorkerResult} per rank (index = rank).
 *
 * <pre>
 * GroupResult result = group.awaitCompletion(Duration.ofMinutes(5));
 * if (!result.succeeded()) {
 *   System.err.println(result.summary());
 *   // rank 1 (pid 4242) failed with exit code 1 after 0.81 s; stopped ranks 0, 2
 *   //   rank 0 (pid 4241): exit code 143 after 0.95 s (stopped by the launcher)
 *   //   rank 1 (pid 4242): exit code 1 after 0.81 s: java.lang.IllegalStateException: no shard
 *   //   ...
 * }
 * </pre>
 *
 * <p>Instances are immutable.
 */
public final class GroupResult {

  /** Why the group ended. */
  public enum Outcome {
    /** Every worker exited with code 0. */
    SUCCEEDED,
    /** A worker exited with a non-zero code; the others were stopped. See {@link #failure()}. */
    FAILED,
    /** The timeout passed to {@link WorkerGroup#awaitCompletion(Duration)} expired; all were stopped. */
    TIMED_OUT,
    /** The group was closed (e.g. on Ctrl-C) while workers were running. */
    TERMINATED
  }

  private final Outcome outcome;
  private final List<WorkerResult> workers;
  private final WorkerResult failure;
  private final Duration elapsed;
  private final List<WorkerResult> replaced;

  GroupResult(Outcome outcome, List<WorkerResult> workers, WorkerResult failure, Duration elapsed,
      List<WorkerResult> replaced) {
    this.outcome = Objects.requireNonNull(outcome, "outcome");
    this.workers = List.copyOf(workers);
    this.failure = failure;
    this.elapsed = Objects.requireNonNull(elapsed, "elapsed");
    this.replaced = List.copyOf(replaced);
  }

  /** Why the group ended. */
  public Outcome outcome() {
    return outcome;
  }

  /** Whether every worker exited with code 0. */
  public boolean succeeded() {
    return outcome == Outcome.SUCCEEDED;
  }

  /** Results by rank: {@code workers().get(r).rank() == r}. */
  public List<WorkerResult> workers() {
    return workers;
  }

  /**
   * The processes of {@code rank} that failed and were started again ({@link
   * WorkerGroupSpec#workerRestarts() worker restarts}), first one first; {@link #workers()} holds
   * the last. Empty without restarts.
   */
  public List<WorkerResult> earlierAttempts(int rank) {
    return replaced.stream().filter(w -> w.rank() == rank).toList();
  }

  /** The first worker that exited with a non-zero code on its own; present iff {@link Outcome#FAILED}. */
  public Optional<WorkerResult> failure() {
    return Optional.ofNullable(failure);
  }

  /** Time from the start of the group until every worker had exited. */
  public Duration elapsed() {
    return elapsed;
  }

  /**
   * The first line of {@link #summary()}. When several ranks failed on their own it names them all
   * and which exited first: that one is not necessarily the cause (its program may have failed
   * because another's did), so the summary's lines show each one's error.
   */
  public String headline() {
    String stopped = ranks(workers.stream().filter(WorkerResult::stoppedByLauncher).toList());
    String stoppedPart = stopped.isEmpty() ? "" : "; stopped ranks " + stopped;
    List<WorkerResult> failed = workers.stream().filter(WorkerResult::failedOnItsOwn).toList();
    return switch (outcome) {
      case SUCCEEDED -> "all " + workers.size() + " workers exited with code 0 in " + Elapsed.format(elapsed);
      case FAILED -> failed.size() <= 1
          ? "rank " + failure.rank() + " (pid " + failure.pid() + ") failed with exit code "
              + failure.exitCode() + failure.signalNote() + " after " + Elapsed.format(failure.elapsed())
              + stoppedPart
          : "ranks " + ranks(failed) + " failed; the first to exit was rank " + failure.rank() + " (pid "
              + failure.pid() + "), with exit code " + failure.exitCode() + " after "
              + Elapsed.format(failure.elapsed()) + stoppedPart;
      case TIMED_OUT -> "timed out after " + Elapsed.format(elapsed) + stoppedPart;
      case TERMINATED -> "terminated after " + Elapsed.format(elapsed) + stoppedPart;
    };
  }

  private static String ranks(List<WorkerResult> results) {
    return results.stream().map(w -> Integer.toString(w.rank())).collect(Collectors.joining(", "));
  }

  /**
   * A headline plus one indented line per rank, for reports, each followed by its {@link
   * #earlierAttempts earlier attempts}: when every rank failed at once and was started again, the
   * cause is in the first attempts, and the last ones only say that their world had ended.
   */
  public String summary() {
    String nl = System.lineSeparator();
    return headline() + workers.stream().map(w -> nl + "  " + w.describe() + earlierAttempts(w.rank()).stream()
        .map(before -> nl + "    started again after: " + before.describe()).collect(Collectors.joining()))
        .collect(Collectors.joining());
  }

  @Override
  public String toString() {
    return "GroupResult{" + outcome + ", " + workers + "}";
  }
}
