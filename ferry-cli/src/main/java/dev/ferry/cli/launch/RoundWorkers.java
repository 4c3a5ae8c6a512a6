package dev.ferry.cli.launch;

import java.io.IOException;
import java.util.Optional;

/**
 * This node's workers in one round of a {@link MultiNodeRun}, and the stop that may end the round
 * from another thread: the round's watch (another node failed, a node arrived late, the store is
 * lost) or this launcher closing. The watch runs from before the workers start, so a stop may come
 * first: it then keeps them from starting, and the round ends as it would had the stop come just
 * after ({@link WorkerGroup#start()} would throw on a group closed before it started).
 *
 * <pre>
 *   watch thread / shutdown hook      round's thread
 *   stop(outcome) ──────────────┐     start(starter)
 *                               ├──▶  one lock: a stop before start → not started (empty);
 *                               │     during start → waits, then closes the started group;
 *                               └──▶  after start → closes it (awaitCompletion: TERMINATED)
 * </pre>
 *
 * <p>This class is thread-safe.
 */
final class RoundWorkers {
  /** Starts this node's group; the group it returns (maybe another than first made) is the one a stop closes. */
  interface Starter {
    WorkerGroup start() throws IOException;
  }

  private final Object lock = new Object();
  private WorkerGroup group; // guarded by lock
  private boolean stopped; // guarded by lock
  private NodeRendezvous.RoundOutcome ending; // guarded by lock

  /**
   * Starts the workers with {@code starter} and returns their group, or empty if the round was
   * stopped first. A stop that comes meanwhile waits for the start, then closes the group.
   */
  Optional<WorkerGroup> start(Starter starter) throws IOException {
    synchronized (lock) {
      if (stopped) {
        return Optional.empty();
      }
      group = starter.start();
      return Optional.of(group);
    }
  }

  /**
   * Stops this node's workers, or keeps them from starting. {@code ending} is how the round ended
   * for the job (another node's failure), or null when this launcher was stopped; the first one
   * given is kept.
   */
  void stop(NodeRendezvous.RoundOutcome ending) {
    WorkerGroup running;
    synchronized (lock) {
      stopped = true;
      if (this.ending == null) {
        this.ending = ending;
      }
      running = group;
    }
    if (running != null) {
      running.close(); // outside the lock: closing waits up to the grace period for the workers to exit
    }
  }

  /** Whether the round was stopped. */
  boolean stopped() {
    synchronized (lock) {
      return stopped;
    }
  }

  /** How the round ended for the job, when a stop said so. */
  Optional<NodeRendezvous.RoundOutcome> ending() {
    synchronized (lock) {
      return Optional.ofNullable(ending);
    }
  }
}
