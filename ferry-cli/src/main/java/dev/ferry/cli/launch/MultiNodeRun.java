package dev.ferry.cli.launch;

import dev.ferry.rpc.RpcException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One node's part of a job that may span several nodes, torchrun's elastic agent: meet the other
 * launchers ({@link NodeRendezvous}), start this node's workers at their global ranks, stop them
 * when a worker anywhere fails, and, while {@code maxRestarts} allows, restart the whole world in a
 * new round (every node stops its workers and joins again; torchrun does the same). With {@code
 * MIN:MAX} nodes, a node that arrives after a round started (and finds room) ends that round the
 * same way and the world restarts with it; such a round is not counted as a restart.
 *
 * <pre>
 * MultiNodeRun run = new MultiNodeRun(rendezvousSpec, workerSpec, 3, null, System.out, System.err);
 * Runtime.getRuntime().addShutdownHook(new Thread(run::close)); // Ctrl-C stops this node, and so the job
 * int exitCode = run.call(); // 0 once every node's workers succeeded
 * </pre>
 *
 * <p>Every node exits with the same code: 0, or the exit code of the job's first failing worker
 * (1 when outside 1..255, or when the nodes could not meet), 124 if this node's {@code timeout} ran
 * out, 130 if this node was interrupted. Each worker gets {@link WorkerEnvironment}'s variables for
 * its global rank, {@code FERRY_SOCKET_HOST} (multi-node: listen where other nodes reach it),
 * and torchrun's {@code TORCHELASTIC_RESTART_COUNT}, {@code TORCHELASTIC_MAX_RESTARTS} and
 * {@code TORCHELASTIC_RUN_ID}, so a restarted worker can tell it was restarted.
 *
 * <p>Not thread-safe; {@link #close()} may be called from a shutdown hook.
 */
public final class MultiNodeRun implements AutoCloseable {
  static final int EXIT_RENDEZVOUS_FAILED = 1;
  static final int EXIT_TIMEOUT = 124;
  static final int EXIT_TERMINATED = 130;

  private final JobRendezvousSpec rendezvousSpec;
  private final WorkerGroupSpec workers;
  private final int maxRestarts;
  private final Duration timeout;
  private final PrintStream err;
  private final PrintStream out;
  private final CountDownLatch finished = new CountDownLatch(1);
  private final AtomicReference<RoundWorkers> current = new AtomicReference<>();
  private int statusPort; // the first round's status page port, once it served one
  private volatile boolean closed;
  private NodeRendezvous rendezvous;
  private Consumer<RoundWorkers> beforeStart = round -> { };

  /**
   * @param rendezvousSpec how to meet the other nodes
   * @param workers this node's workers (nproc, main class, JVM options); placement and master are set per round
   * @param maxRestarts how many times the world may be restarted after a failure
   * @param timeout this node's time limit for the whole job, or null
   * @param out where workers' stdout lines go, prefixed {@code [node1/worker5]}
   * @param err where workers' stderr lines and this launcher's reports go
   */
  public MultiNodeRun(JobRendezvousSpec rendezvousSpec, WorkerGroupSpec workers, int maxRestarts, Duration timeout,
      PrintStream out, PrintStream err) {
    this.rendezvousSpec = Objects.requireNonNull(rendezvousSpec, "rendezvousSpec");
    this.workers = Objects.requireNonNull(workers, "workers");
    if (maxRestarts < 0) {
      throw new IllegalArgumentException("--max-restarts must not be negative, got " + maxRestarts);
    }
    this.maxRestarts = maxRestarts;
    this.timeout = timeout;
    this.out = Objects.requireNonNull(out, "out");
    this.err = Objects.requireNonNull(err, "err");
  }

  /**
   * Runs rounds until the job succeeds, fails beyond its restarts, or this node is stopped;
   * returns the exit code. Leaves the job's store before returning.
   */
  public int call() {
    try {
      try {
        rendezvous = NodeRendezvous.open(rendezvousSpec, waiting -> err.println("ferry run: " + waiting));
      } catch (RuntimeException e) {
        err.println("ferry run: cannot meet the other nodes through " + rendezvousSpec.backend().name().toLowerCase()
            + " at " + rendezvousSpec.endpoint() + ": " + e.getMessage());
        return EXIT_RENDEZVOUS_FAILED;
      }
      try {
        return rounds();
      } finally {
        rendezvous.close();
      }
    } finally {
      finished.countDown();
    }
  }

  private int rounds() {
    int restarts = 0; // rounds after a failure; a round that grows the world (a node arrived) is not one
    for (int round = 0; ; round++) {
      NodeRendezvous.RoundPlan plan;
      try {
        plan = rendezvous.join(round, workers.nproc(), waiting -> err.println("ferry run: " + waiting));
      } catch (RpcException e) {
        err.println("ferry run: " + e.getMessage());
        return EXIT_RENDEZVOUS_FAILED;
      }
      round = plan.round(); // a node that arrived late joins the round that takes it
      // Every round, on every node: with etcd or ZooKeeper a later round may rank the nodes anew.
      err.println("ferry run: node " + plan.slot() + " of " + plan.placement().nodes() + ", ranks "
          + plan.placement().firstRank() + ".." + (plan.placement().firstRank() + workers.nproc() - 1) + " of "
          + plan.placement().worldSize() + (restarts > 0 ? " (restart " + restarts + " of " + maxRestarts + ")" : ""));
      NodeRendezvous.RoundOutcome outcome = runRound(plan, restarts);
      rendezvous.leave(plan, waiting -> err.println("ferry run: " + waiting));
      if (outcome.succeeded()) {
        err.println("ferry run: all " + plan.placement().worldSize() + " workers on " + plan.placement().nodes()
            + (plan.placement().nodes() == 1 ? " node" : " nodes") + " exited with code 0" + (restarts > 0 ? " (after " + restarts + " restart"
            + (restarts == 1 ? "" : "s") + ")" : ""));
        return 0;
      }
      err.println("ferry run: " + outcome.description());
      if (outcome.grows() && !closed) {
        err.println("ferry run: restarting the world with the new node");
        continue;
      }
      if (closed || restarts >= maxRestarts || rendezvous.lost()) {
        return outcome.exitCode();
      }
      restarts++;
      err.println("ferry run: restarting the world (restart " + restarts + " of " + maxRestarts + ")");
    }
  }

  private NodeRendezvous.RoundOutcome runRound(NodeRendezvous.RoundPlan plan, int restarts) {
    NodePlacement placement = plan.placement();
    WorkerGroupSpec.Builder spec = workers.toBuilder()
        .placement(placement)
        .masterAddr(plan.masterAddr())
        .masterPort(plan.masterPort())
        .putEnv("TORCHELASTIC_RESTART_COUNT", Integer.toString(restarts))
        .putEnv("TORCHELASTIC_MAX_RESTARTS", Integer.toString(maxRestarts))
        .putEnv("TORCHELASTIC_RUN_ID", rendezvousSpec.runId())
        .sink(ConsoleLineSink.labelled(out, err, placement::label));
    if (placement.multiNode()) {
      spec.putEnv("FERRY_SOCKET_HOST", plan.localAddress());
    }
    if (workers.statusPort() == 0 && statusPort > 0) {
      spec.statusPort(statusPort); // the page a user opened goes on showing the world after a restart
    }
    WorkerGroup group = new WorkerGroup(spec.build());
    RoundWorkers round = new RoundWorkers();
    current.set(round);
    rendezvous.watch(plan, outcome -> {
      if (!outcome.succeeded()) {
        round.stop(outcome); // another node failed: stop ours, or keep them from starting
      }
    });
    if (closed) {
      round.stop(null); // close() came before this round was current
    }
    try {
      beforeStart.accept(round);
      WorkerGroup first = group;
      Optional<WorkerGroup> started = round.start(() -> start(first, spec));
      if (started.isEmpty()) {
        round.ending().ifPresent(ending -> err.println("ferry run: round " + plan.round() + " ended before "
            + label(plan) + "'s workers started; they are not started"));
        return ending(plan, round);
      }
      group = started.get();
      group.statusPage().ifPresent(page -> {
        statusPort = page.getPort();
        err.println("ferry run: status page of this node's workers at " + page);
      });
      GroupResult result = timeout == null ? group.awaitCompletion() : group.awaitCompletion(timeout);
      return switch (result.outcome()) {
        case SUCCEEDED -> rendezvous.succeeded(plan);
        case FAILED -> {
          WorkerResult failure = result.failure().orElseThrow();
          int code = failure.exitCode() >= 1 && failure.exitCode() <= 255 ? failure.exitCode() : 1;
          yield rendezvous.failed(plan, code, placement.label(failure.rank()) + " (pid " + failure.pid()
              + ") failed with exit code " + failure.exitCode() + failure.error().map(e -> ": " + e).orElse(""));
        }
        case TIMED_OUT -> rendezvous.failed(plan, EXIT_TIMEOUT, label(plan) + " timed out after "
            + Elapsed.format(timeout));
        case TERMINATED -> ending(plan, round);
      };
    } catch (IOException e) {
      return rendezvous.failed(plan, EXIT_RENDEZVOUS_FAILED, label(plan) + " could not start its workers: "
          + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return rendezvous.failed(plan, EXIT_TERMINATED, label(plan) + " was interrupted");
    } finally {
      group.close();
    }
  }

  /** How a round that was stopped ended: another node's failure, or this launcher's stop (told to the others). */
  private NodeRendezvous.RoundOutcome ending(NodeRendezvous.RoundPlan plan, RoundWorkers round) {
    return round.ending().orElseGet(() -> rendezvous.failed(plan, EXIT_TERMINATED, label(plan) + " was stopped"));
  }

  /**
   * For tests: runs on the round's thread between the start of the round's watch and the start of
   * its workers, the window in which a stop may come first.
   */
  void beforeStart(Consumer<RoundWorkers> hook) {
    beforeStart = Objects.requireNonNull(hook, "hook");
  }

  /**
   * Starts a round's workers. A later round serves the status page on the port of the first, so
   * that the address printed at the start stays good; should another process have taken that port
   * in between, the page moves to a free one (and the new address is printed).
   */
  private WorkerGroup start(WorkerGroup group, WorkerGroupSpec.Builder spec) throws IOException {
    try {
      return group.start();
    } catch (UncheckedIOException e) {
      if (statusPort <= 0 || group.spec().statusPort() != statusPort) {
        throw e;
      }
      err.println("ferry run: the status page's port " + statusPort + " is taken (" + e.getMessage()
          + "); serving it on a free port");
      return new WorkerGroup(spec.statusPort(0).build()).start();
    }
  }

  private static String label(NodeRendezvous.RoundPlan plan) {
    return "node" + plan.slot();
  }

  /**
   * Stops this node's workers and waits (at most the grace period and 10 s) for {@link #call()} to
   * tell the other nodes, which then stop theirs: from a shutdown hook, the JVM must not exit first.
   */
  @Override
  public void close() {
    closed = true;
    RoundWorkers round = current.get();
    if (round != null) {
      round.stop(null);
    }
    try {
      finished.await(workers.terminationGrace().toMillis() + 10_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
