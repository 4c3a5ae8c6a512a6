package dev.ferry.cli.launch;

import dev.ferry.rpc.store.TcpStore;
import dev.ferry.rpc.store.TcpStoreOptions;
import dev.ferry.status.StatusServer;
import dev.ferry.status.WorkerProcess;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running group of worker JVMs on this machine, one per rank, started from a {@link
 * WorkerGroupSpec}: the engine of {@code ferry run} and of the benchmark harness.
 *
 * <pre>
 * WorkerGroupSpec spec = WorkerGroupSpec.builder().nproc(3).mainClass("dev.ferry.examples.HelloCluster").build();
 * try (WorkerGroup group = new WorkerGroup(spec).start()) {
 *   GroupResult result = group.awaitCompletion(Duration.ofMinutes(10));
 *   System.exit(result.succeeded() ? 0 : 1);
 * } // close() stops whatever is still running
 * </pre>
 *
 * <p>To talk to workers, pipe their streams and use {@link #process(int)}:
 * <pre>
 * WorkerGroupSpec spec = base.toBuilder().stdout(OutputMode.PIPE).pipeStdin(true).build();
 * try (WorkerGroup group = new WorkerGroup(spec).start()) {
 *   Process rank0 = group.process(0);
 *   rank0.getOutputStream().write("go\n".getBytes(UTF_8));
 *   rank0.getOutputStream().flush();
 *   String reply = new BufferedReader(new InputStreamReader(rank0.getInputStream(), UTF_8)).readLine();
 * }
 * </pre>
 *
 * <p>Lifecycle: {@code new} → {@link #start()} → {@link #awaitCompletion} (optional) → {@link
 * #close()}. The group is fail-fast, like torchrun: as soon as one worker exits with a non-zero
 * code, {@code awaitCompletion} stops the others (after at most 1 s for them to exit on their own,
 * so that those failing with it print their errors; then SIGTERM, and SIGKILL after {@link
 * WorkerGroupSpec#terminationGrace()}), unless the spec allows {@linkplain
 * WorkerGroupSpec#workerRestarts() worker restarts}: then the failed worker alone is started again
 * under its rank while the others run on, as long as its rank has restarts left. Always close the group, in a {@code try}-with-resources
 * or a shutdown hook: workers are separate processes. A launcher that cannot clean up (killed with
 * SIGKILL, or exiting without closing the group) leaves them to a guard process that {@code start}
 * launches beside them: it sends them SIGTERM, then SIGKILL after the grace period, as {@code close}
 * would.
 *
 * <p>This class is thread-safe; in particular {@link #close()} may be called from a shutdown hook
 * while another thread is in {@code start} or {@code awaitCompletion}.
 */
public final class WorkerGroup implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(WorkerGroup.class);

  // Bound on waiting for forwarded output after the workers exited: normally the pipes reach
  // end-of-file at once, but a worker's orphaned child could hold them open forever.
  private static final Duration OUTPUT_DRAIN = Duration.ofSeconds(5);
  // After a worker fails, how long the others may take to exit on their own before they are sent
  // SIGTERM: one failure often makes the others fail within milliseconds (a gather it never joined),
  // and a worker signalled while it fails may die before printing its own error, the one the summary
  // needs. Healthy workers only run this much longer.
  private static final Duration SETTLE = Duration.ofSeconds(1);

  private enum State { NEW, RUNNING, CLOSED }

  private final WorkerGroupSpec spec;
  private final Object lock = new Object();
  private final Object awaitLock = new Object();
  // Released once per worker exit; wakes up awaitCompletion.
  private final Semaphore exitSignals = new Semaphore(0);
  // Counted down once the group is closed: a close that finds another under way waits for this.
  private final CountDownLatch closed = new CountDownLatch(1);
  /** Whether closing has begun (close(), or a start that failed); guarded by lock. */
  private boolean closing;
  private final AtomicBoolean aotTrainingDone = new AtomicBoolean();
  private volatile State state = State.NEW;
  private volatile List<Worker> workers = List.of();
  private volatile int masterPort;
  private long startNanos;
  private GroupResult result; // guarded by awaitLock
  private volatile StatusServer status;
  /** The workers' rendezvous store when the launcher serves it (worker restarts), else null. */
  private volatile TcpStore agentStore;
  /** How many times each rank was started again; guarded by lock. */
  private int[] restarts;
  /** Workers that failed and were replaced, whose output still drains; guarded by lock. */
  private final List<Worker> replaced = new ArrayList<>();
  /** The worker whose failure found no other rank running, so that it is said once; guarded by lock. */
  private Worker lastOfTheWorld;
  private volatile String authToken;
  /** Stops the workers should this launcher die without doing so; null if it could not start. */
  private volatile OrphanGuard guard;

  /** Creates a group that {@link #start()} will launch. */
  public WorkerGroup(WorkerGroupSpec spec) {
    this.spec = Objects.requireNonNull(spec, "spec");
  }

  /**
   * Starts the workers, rank 0 first, and returns {@code this}. If a worker cannot be started,
   * the ones already started are stopped before the exception is thrown.
   *
   * @throws IOException if a process cannot be created (e.g. the {@code java} binary is missing)
   * @throws IllegalStateException if already started or closed
   */
  public WorkerGroup start() throws IOException {
    synchronized (lock) {
      if (state != State.NEW) {
        throw new IllegalStateException("worker group is " + (state == State.CLOSED ? "closed" : "already started"));
      }
      masterPort = spec.masterPort() != 0 ? spec.masterPort() : FreePorts.pick();
      authToken = groupAuthToken();
      restarts = new int[spec.nproc()];
      if (spec.workerRestarts() > 0) {
        // No worker may hold the store that a restarted one meets the others through.
        agentStore = TcpStore.create(TcpStoreOptions.builder().host(spec.masterAddr()).port(masterPort).server(true)
            .authToken(reportToken(authToken)).build());
      }
      if (spec.statusPort() >= 0) {
        status = StatusServer.start(spec.statusPort(), reportToken(authToken), spec.nproc(), this::processViews);
      }
      guard = startGuard();
      startNanos = System.nanoTime();
      List<Worker> started = new ArrayList<>(spec.nproc());
      int rank = 0;
      try {
        for (; rank < spec.nproc(); rank++) {
          started.add(launch(rank));
        }
      } catch (IOException | RuntimeException e) {
        state = State.CLOSED;
        closing = true;
        ProcessTerminator.stop(started, spec.terminationGrace(), "rank " + rank + " could not be started");
        closeGuard();
        closeStatusPage();
        closeAgentStore();
        closed.countDown();
        if (e instanceof IOException) {
          throw new IOException("cannot start worker rank " + rank + " with " + spec.javaExecutable() + ": " + e.getMessage(), e);
        }
        throw e;
      }
      workers = List.copyOf(started);
      state = State.RUNNING;
      log.info("started {} worker{} running {} (master {}:{}), pids {}", spec.nproc(), spec.nproc() == 1 ? "" : "s",
          spec.mainClass(), spec.masterAddr(), masterPort, workers.stream().map(w -> w.process().pid()).toList());
    }
    return this;
  }

  /** Starts the process of {@code rank}. */
  private Worker launch(int rank) throws IOException {
    ProcessBuilder builder = WorkerCommand.forRank(spec, rank, masterPort, authToken,
        status == null ? null : status.reportUrl(rank));
    if (agentStore != null) {
      builder.environment().put(WorkerEnvironment.USE_AGENT_STORE, "True");
    }
    log.debug("rank {} command: {}", rank, builder.command());
    Process process = builder.start();
    OrphanGuard watching = guard;
    if (watching != null) {
      watching.watch(process);
    }
    return Worker.started(rank, process, spec, startNanos, this::exited);
  }

  /** A worker exited (on a JDK thread): one that failed is started again at once if it may be. */
  private void exited(Worker worker) {
    if (spec.workerRestarts() > 0 && worker.exitCode() != 0 && !worker.stopRequested()) {
      restartAlone(worker);
    }
    exitSignals.release();
  }

  /**
   * Starts {@code failed}'s rank again alone, if its rank has restarts left, the group still runs
   * and another rank still runs; returns whether it did (or had already: both the exit callback and
   * {@link #await} ask). The new process rejoins the running world as a new incarnation; once every
   * rank has exited there is no world to rejoin, and restarting all of it is not this option's
   * contract but {@code --max-restarts}'s, so the failure then ends the group.
   */
  private boolean restartAlone(Worker failed) {
    synchronized (lock) {
      int rank = failed.rank();
      if (workers.isEmpty()) {
        return false; // the group did not start
      }
      if (workers.get(rank) != failed) {
        return true;
      }
      if (state != State.RUNNING || restarts[rank] >= spec.workerRestarts()) {
        return false;
      }
      if (failed == lastOfTheWorld) {
        return false;
      }
      if (workers.stream().allMatch(w -> w == failed || w.hasExited())) {
        lastOfTheWorld = failed;
        log.warn("rank {} (pid {}) failed with exit code {} and no other rank is running: the world it would rejoin "
            + "has ended, so it is not started again (worker restarts start one worker into a running world; "
            + "--max-restarts restarts the whole world)", rank, failed.process().pid(), failed.exitCode());
        return false;
      }
      restarts[rank]++;
      log.warn("rank {} (pid {}) failed with exit code {}; starting it again alone (restart {} of {}), the others run on",
          rank, failed.process().pid(), failed.exitCode(), restarts[rank], spec.workerRestarts());
      Worker again;
      try {
        again = launch(rank);
      } catch (IOException e) {
        log.error("rank {} could not be started again: {}", rank, e.getMessage());
        return false;
      }
      List<Worker> now = new ArrayList<>(workers);
      now.set(rank, again);
      replaced.add(failed);
      workers = List.copyOf(now);
      return true;
    }
  }

  /** How many times {@code rank} was started again after failing (worker restarts). */
  public int restarts(int rank) {
    requireStarted();
    synchronized (lock) {
      return restarts[rank];
    }
  }

  /**
   * A fresh token for this group, or null when the spec's or the launcher's environment already has
   * one (the workers then use that: a group spread over launchers shares it that way).
   */
  private String groupAuthToken() {
    boolean given = spec.env().containsKey(WorkerEnvironment.FERRY_AUTH_TOKEN)
        || System.getenv(WorkerEnvironment.FERRY_AUTH_TOKEN) != null;
    return given ? null : WorkerEnvironment.newAuthToken();
  }

  /** The token the group's workers hold, which their status reports must carry: ours, else the one given. */
  private String reportToken(String fresh) {
    if (fresh != null) {
      return fresh;
    }
    String given = spec.env().get(WorkerEnvironment.FERRY_AUTH_TOKEN);
    return given != null ? given : System.getenv(WorkerEnvironment.FERRY_AUTH_TOKEN);
  }

  /**
   * The launcher's view of each worker's process, for the status page; its incarnation counts the
   * rounds a multi-node run restarted the world in ({@code TORCHELASTIC_RESTART_COUNT}), from 1.
   */
  private List<WorkerProcess> processViews() {
    int incarnation = 1 + Integer.parseInt(spec.env().getOrDefault("TORCHELASTIC_RESTART_COUNT", "0"));
    return workers.stream().map(w -> new WorkerProcess(w.rank(), w.process().pid(), incarnation + restarts(w.rank()),
        !w.hasExited(), w.hasExited() ? w.exitCode() : -1)).toList();
  }

  /** The address of the group's live status page, when the spec asked for one and the group started. */
  public Optional<URI> statusPage() {
    StatusServer server = status;
    return server == null ? Optional.empty() : Optional.of(server.pageUri());
  }

  /** The guard of this group's workers, or null (logged) if its JVM cannot start: they then outlive a killed launcher. */
  private OrphanGuard startGuard() {
    try {
      return OrphanGuard.start(spec.terminationGrace());
    } catch (IOException e) {
      log.warn("cannot start the guard that stops the workers should this launcher be killed ({}); they would "
          + "outlive a launcher killed with SIGKILL", e.getMessage());
      return null;
    }
  }

  private void closeGuard() {
    OrphanGuard watching = guard;
    if (watching != null) {
      watching.close();
    }
  }

  private void closeAgentStore() {
    TcpStore store = agentStore;
    if (store != null) {
      store.close();
    }
  }

  private void closeStatusPage() {
    StatusServer server = status;
    if (server != null) {
      server.close();
    }
  }

  /** The spec this group was created from. */
  public WorkerGroupSpec spec() {
    return spec;
  }

  /** Number of workers. */
  public int size() {
    return spec.nproc();
  }

  /**
   * The rendezvous port the workers were given ({@code MASTER_PORT}), resolved if the spec asked
   * for a free one.
   *
   * @throws IllegalStateException if not started
   */
  public int masterPort() {
    requireStarted();
    return masterPort;
  }

  /**
   * The process of worker {@code rank}, for its pid, liveness and, when the spec pipes them, its
   * stdin ({@code getOutputStream}), stdout ({@code getInputStream}) and stderr.
   *
   * @throws IllegalStateException if not started
   * @throws IndexOutOfBoundsException if {@code rank} is not in {@code 0 .. size()-1}
   */
  public Process process(int rank) {
    requireStarted();
    return workers.get(rank).process();
  }

  /** The processes of all workers, by rank. */
  public List<Process> processes() {
    requireStarted();
    return workers.stream().map(Worker::process).toList();
  }

  /** Waits without a time limit; see {@link #awaitCompletion(Duration)}. */
  public GroupResult awaitCompletion() throws InterruptedException {
    return await(null);
  }

  /**
   * Waits until every worker has exited, or one fails, or {@code timeout} passes, and returns how
   * the group ended. On a failure or a timeout the remaining workers are stopped before this
   * method returns. Forwarded output of the workers has been delivered to the sink by then.
   * Later calls return the same result at once.
   *
   * @throws InterruptedException if interrupted while waiting; the workers keep running, so
   *     close the group
   * @throws IllegalStateException if not started
   */
  public GroupResult awaitCompletion(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    return await(timeout);
  }

  private GroupResult await(Duration timeout) throws InterruptedException {
    requireStarted();
    synchronized (awaitLock) {
      if (result != null) {
        return result;
      }
      long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + saturatedNanos(timeout);
      GroupResult.Outcome outcome = null;
      Worker failure;
      // The state is read from the workers, not from the signals, so that a call interrupted
      // half-way loses nothing and a later call sees the same history.
      while (true) {
        failure = firstFailure();
        if (failure != null && restartAlone(failure)) {
          continue;
        }
        if (failure != null) {
          outcome = GroupResult.Outcome.FAILED;
          ProcessTerminator.awaitExit(workers, SETTLE);
          ProcessTerminator.stop(workers, spec.terminationGrace(), failure.name() + " failed");
          break;
        }
        if (workers.stream().allMatch(Worker::hasExited)) {
          break;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          outcome = GroupResult.Outcome.TIMED_OUT;
          ProcessTerminator.stop(workers, spec.terminationGrace(), "timeout of " + Elapsed.format(timeout) + " expired");
          break;
        }
        if (timeout == null) {
          exitSignals.acquire();
        } else {
          exitSignals.tryAcquire(left, TimeUnit.NANOSECONDS);
        }
      }
      long endNanos = System.nanoTime();
      if (outcome == null) {
        boolean closed = workers.stream().anyMatch(Worker::stopRequested);
        outcome = closed ? GroupResult.Outcome.TERMINATED : GroupResult.Outcome.SUCCEEDED;
      }
      awaitOutput();
      List<WorkerResult> earlier;
      synchronized (lock) {
        earlier = replaced.stream().map(Worker::result).toList();
      }
      result = new GroupResult(outcome, workers.stream().map(Worker::result).toList(),
          failure == null ? null : failure.result(), Elapsed.since(startNanos, endNanos), earlier);
      finishAotTraining(outcome == GroupResult.Outcome.SUCCEEDED);
      // The caller reports the outcome (the CLI prints result.summary()); logging it too would say it twice.
      log.debug("{}", result.headline());
      return result;
    }
  }

  /**
   * Stops every worker that is still running (SIGTERM, then SIGKILL after the grace period) and
   * waits for them to exit and for their forwarded output to drain, both bounded. Idempotent: a
   * close while another thread's is under way returns once that one is done, so that whoever
   * closes knows the workers are gone and the status page's port is free.
   */
  @Override
  public void close() {
    boolean underWay;
    synchronized (lock) {
      underWay = closing;
      closing = true;
      state = State.CLOSED;
    }
    if (underWay) {
      awaitClosed(); // outside the lock, which the close under way takes
      return;
    }
    try {
      ProcessTerminator.stop(workers, spec.terminationGrace(), "the worker group is closing");
      closeGuard();
      workers.forEach(Worker::closeStdin);
      try {
        awaitOutput();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      closeStatusPage();
      closeAgentStore();
      finishAotTraining(false);
    } finally {
      closed.countDown();
    }
  }

  /** Waits for the close under way on another thread (itself bounded); returns early, interrupted, if interrupted. */
  private void awaitClosed() {
    try {
      closed.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Saves the AOT cache this run trained, or drops the training of a run that did not succeed. */
  private void finishAotTraining(boolean succeeded) {
    if (aotTrainingDone.getAndSet(true)) {
      return;
    }
    spec.aotCache().ifPresent(cache -> {
      if (succeeded) {
        cache.finishTraining(spec);
      } else {
        cache.abandonTraining(spec);
      }
    });
  }

  /** The worker that first exited with a non-zero code on its own, or null. */
  private Worker firstFailure() {
    return workers.stream()
        .filter(w -> w.hasExited() && w.exitCode() != 0 && !w.stopRequested())
        .min(Comparator.comparingLong(Worker::exitNanos))
        .orElse(null);
  }

  private void awaitOutput() throws InterruptedException {
    long deadline = System.nanoTime() + OUTPUT_DRAIN.toNanos();
    List<Worker> all = new ArrayList<>(workers);
    synchronized (lock) {
      all.addAll(replaced);
    }
    for (Worker w : all) {
      w.awaitOutput(deadline);
    }
  }

  private void requireStarted() {
    if (workers.isEmpty()) {
      throw new IllegalStateException("worker group was not started");
    }
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 2;
    }
  }
}
