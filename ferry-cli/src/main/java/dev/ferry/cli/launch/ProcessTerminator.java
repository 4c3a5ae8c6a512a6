package dev.ferry.cli.launch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops workers the polite way first: SIGTERM (so shutdown hooks run and logs flush), then, after
 * the grace period, SIGKILL. Descendants of each worker are signalled too, because a worker's own
 * children would otherwise be re-parented to init and outlive the group.
 */
final class ProcessTerminator {

  private static final Logger log = LoggerFactory.getLogger(WorkerGroup.class);

  // After SIGKILL a process is gone within milliseconds unless it is stuck in the kernel.
  private static final Duration KILL_WAIT = Duration.ofSeconds(10);

  private ProcessTerminator() {}

  /**
   * Stops every worker that is still running and waits until they have exited (bounded by the
   * grace period plus {@link #KILL_WAIT}). Returns early, after SIGKILL, if interrupted; the
   * interrupt status is then set again.
   */
  static void stop(List<Worker> workers, Duration grace, String reason) {
    List<Worker> running = new ArrayList<>();
    List<ProcessHandle> descendants = new ArrayList<>();
    for (Worker w : workers) {
      if (w.process().isAlive()) {
        running.add(w);
        // Snapshot before signalling: once the worker is dead its children are no longer its descendants.
        w.process().descendants().forEach(descendants::add);
      }
    }
    if (running.isEmpty()) {
      return;
    }
    log.info("stopping {} ({}): sending SIGTERM, SIGKILL after {}", ranks(running), reason, Elapsed.format(grace));
    for (Worker w : running) {
      w.markStopRequested();
      w.process().destroy();
    }
    descendants.forEach(ProcessHandle::destroy);
    boolean interrupted = false;
    try {
      awaitExit(running, grace);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    List<Worker> stubborn = running.stream().filter(w -> !w.hasExited()).toList();
    if (!stubborn.isEmpty() || descendants.stream().anyMatch(ProcessHandle::isAlive)) {
      if (!stubborn.isEmpty()) {
        log.warn("{} still running after {}; killing (SIGKILL)", ranks(stubborn), Elapsed.format(grace));
      }
      stubborn.forEach(w -> w.process().destroyForcibly());
      descendants.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
      try {
        awaitExit(stubborn, KILL_WAIT);
      } catch (InterruptedException e) {
        interrupted = true;
      }
      stubborn.stream().filter(w -> !w.hasExited()).forEach(w ->
          log.error("{} (pid {}) survived SIGKILL for {}", w.name(), w.process().pid(), Elapsed.format(KILL_WAIT)));
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits, at most {@code timeout}, until every one of {@code workers} has exited. */
  static void awaitExit(List<Worker> workers, Duration timeout) throws InterruptedException {
    if (workers.isEmpty()) {
      return;
    }
    CompletableFuture<?>[] exits = workers.stream().map(Worker::exited).toArray(CompletableFuture[]::new);
    try {
      CompletableFuture.allOf(exits).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      // The caller checks who is still running.
    } catch (ExecutionException e) {
      throw new IllegalStateException("exit bookkeeping failed", e.getCause());
    }
  }

  /** "ranks 0, 2" on a single node; "node1/worker2, node1/worker3" (their own names) across nodes. */
  private static String ranks(List<Worker> workers) {
    if (workers.get(0).placement().multiNode()) {
      return workers.stream().map(Worker::name).collect(Collectors.joining(", "));
    }
    return (workers.size() == 1 ? "rank " : "ranks ")
        + workers.stream().map(w -> Integer.toString(w.rank())).collect(Collectors.joining(", "));
  }
}
