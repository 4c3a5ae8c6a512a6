package dev.ferry.cli.launch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops the workers of a launcher that died without stopping them ({@code kill -9}, the OOM
 * killer, a crash), which would otherwise run on for ever: a small JVM of its own, started by the
 * launcher before its first worker, that reads its stdin. The launcher writes one line per worker it
 * starts; the end of that input means the launcher has exited (the kernel closes the pipe of a dead
 * process whatever killed it) or closed the group. The guard then stops, as the launcher would have,
 * every worker that still runs and their children: SIGTERM, then SIGKILL after the grace period.
 * After a clean close there is nothing left to stop and it exits quietly.
 *
 * <pre>
 *   launcher ──stdin: "PID START_MILLIS" per worker──▶ guard     (EOF: launcher gone)
 *      │                                                 │
 *      └──── starts ──▶ workers ◀── SIGTERM, SIGKILL ─────┘
 * </pre>
 *
 * <p>Why a process beside the workers rather than a watch inside each: nothing of the launcher runs
 * in a worker (it runs the program's main directly), and a java agent there would slow every
 * worker's start (a trivial main on the 2-vCPU VM: 52 ms to 93 ms cold, as the JDK's CDS archive no
 * longer maps its module graph once {@code java.instrument} is added; 56 to 68 ms from an AOT cache,
 * which would then have to be trained with the agent too). One guard per group costs one small JVM
 * beside the workers (~30 ms of CPU to start, then idle on a read). A worker started by hand has no
 * guard and is unaffected.
 *
 * <pre>
 * java -cp ferry-cli.jar 'dev.ferry.cli.launch.OrphanGuard$Main' LAUNCHER_PID GRACE_MILLIS
 * </pre>
 *
 * <p>The launcher side is thread-safe.
 */
final class OrphanGuard implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(WorkerGroup.class);

  // It exits as soon as its input ends and it finds nothing running; more means it is stopping workers.
  private static final Duration EXIT_WAIT = Duration.ofSeconds(2);

  private final Process guard;
  private final OutputStream pids;
  private boolean broken; // guarded by this

  private OrphanGuard(Process guard) {
    this.guard = guard;
    this.pids = guard.getOutputStream();
  }

  /**
   * Starts the guard of a group whose workers may take {@code grace} to stop.
   *
   * @throws IOException if its JVM cannot be started
   */
  static OrphanGuard start(Duration grace) throws IOException {
    List<String> command = List.of(JavaExecutable.current().toString(),
        // Idle but for a moment at the end: no JIT compiler threads, no heap, no perf-data file worth having.
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx16m", "-XX:-UsePerfData",
        "-cp", ownLocation(), Main.class.getName(),
        Long.toString(ProcessHandle.current().pid()), Long.toString(grace.toMillis()));
    // Its only words, that it stops workers, are for whoever watched the launcher's stderr.
    Process process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    return new OrphanGuard(process);
  }

  private static String ownLocation() throws IOException {
    try {
      return Path.of(OrphanGuard.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException | RuntimeException e) {
      throw new IOException("cannot tell where " + OrphanGuard.class.getName() + " was loaded from: " + e, e);
    }
  }

  /** The guard's own process. */
  Process process() {
    return guard;
  }

  /** Makes the guard stop {@code worker} should this launcher die while it runs. */
  synchronized void watch(Process worker) {
    if (broken) {
      return;
    }
    long started = worker.toHandle().info().startInstant().map(Instant::toEpochMilli).orElse(-1L);
    try {
      pids.write((worker.pid() + " " + started + "\n").getBytes(StandardCharsets.US_ASCII));
      pids.flush();
    } catch (IOException e) {
      broken = true;
      log.warn("the guard that stops the workers should this launcher be killed is gone (exit code {}); "
          + "they would outlive a killed launcher", guard.isAlive() ? "none yet" : guard.exitValue());
    }
  }

  /** Ends the guard's input and waits, bounded, for it to exit: call once the workers are stopped. */
  @Override
  public void close() {
    synchronized (this) {
      broken = true;
      try {
        pids.close();
      } catch (IOException e) {
        log.debug("closing the guard's input failed: {}", e.toString());
      }
    }
    try {
      if (!guard.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        log.debug("the guard (pid {}) has not exited after {}; leaving it", guard.pid(), Elapsed.format(EXIT_WAIT));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The guard process: reads the workers' pids until its input ends, then stops what still runs.
   * Apart from the launcher side so that it runs on java.base alone (its class path is this
   * module's classes, without the launcher's logging).
   */
  static final class Main {

    // After SIGKILL a process is gone within milliseconds unless it is stuck in the kernel.
    private static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private Main() {}

    public static void main(String[] args) throws IOException, InterruptedException {
      if (args.length != 2) {
        System.err.println("usage: OrphanGuard LAUNCHER_PID GRACE_MILLIS");
        System.exit(2);
      }
      long launcher = Long.parseLong(args[0]);
      Duration grace = Duration.ofMillis(Long.parseLong(args[1]));
      List<ProcessHandle> workers = new ArrayList<>();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
      for (String line; (line = in.readLine()) != null; ) {
        String[] fields = line.split(" ");
        long started = Long.parseLong(fields[1]);
        // Looked up while the launcher still holds it (an exited worker stays its unreaped child), and
        // checked against its start time, so that a reused pid is never taken for a worker.
        ProcessHandle.of(Long.parseLong(fields[0]))
            .filter(handle -> started < 0 || handle.info().startInstant().map(Instant::toEpochMilli)
                .map(time -> time == started).orElse(true))
            .ifPresent(workers::add);
      }
      stop(workers.stream().filter(ProcessHandle::isAlive).toList(), launcher, grace);
    }

    private static void stop(List<ProcessHandle> running, long launcher, Duration grace) throws InterruptedException {
      if (running.isEmpty()) {
        return;
      }
      List<ProcessHandle> all = new ArrayList<>(running);
      // Snapshot before signalling: once a worker is dead its children are no longer its descendants.
      running.forEach(worker -> worker.descendants().forEach(all::add));
      System.err.println("ferry: the launcher (pid " + launcher + ") is gone without stopping its workers; stopping pids "
          + running.stream().map(ProcessHandle::pid).toList() + " (SIGTERM, SIGKILL after " + Elapsed.format(grace) + ")");
      all.forEach(ProcessHandle::destroy);
      if (!awaitExit(all, grace)) {
        all.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        awaitExit(all, KILL_WAIT);
      }
    }

    private static boolean awaitExit(List<ProcessHandle> processes, Duration timeout) throws InterruptedException {
      try {
        CompletableFuture.allOf(processes.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new))
            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        return true;
      } catch (TimeoutException e) {
        return false;
      } catch (ExecutionException e) {
        throw new IllegalStateException("waiting for the workers' exit failed", e.getCause());
      }
    }
  }
}
