package dev.ferry.bench.harness;

import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcAgents;
import dev.ferry.rpc.RpcBackendOptions;
import dev.ferry.rpc.TransportTuning;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The worker side of a benchmark run: who this worker is (from the launcher's {@code RANK},
 * {@code WORLD_SIZE}, {@code MASTER_PORT}), the run's configuration (the {@code key=value} arguments
 * written by {@link WorkerLauncher}), the worker's own deadline and how it reports (one line of JSON,
 * written by {@link PlainJson}: a worker loads no JSON library, whose start-up work would fall into
 * what it measures).
 *
 * <pre>
 * public static void main(String[] args) {
 *   WorkerContext.run(args, ctx -&gt; {                   // arms the deadline, halts at the end
 *     RpcAgent agent = ctx.startAgent(16, Duration.ofSeconds(60));
 *     ...
 *     ctx.report(Map.of("median_us", 98.5));           // RESULT {...} on stdout
 *     agent.shutdown();
 *   });
 * }
 * </pre>
 *
 * <p>Rendezvous uses {@code tcp://127.0.0.1:<MASTER_PORT>}, as the PyTorch scripts do.
 */
public final class WorkerContext {

  private final int rank;
  private final int world;
  private final int port;
  private final Map<String, String> config;

  private WorkerContext(int rank, int world, int port, Map<String, String> config) {
    this.rank = rank;
    this.world = world;
    this.port = port;
    this.config = config;
  }

  /**
   * Reads the environment and configuration and arms the deadline: {@code alarm_s} after now
   * the JVM halts with exit code 124 whatever it is doing (the {@code alarm()} of the PyTorch
   * workers), so a hung worker never outlives its run even if the driver died.
   */
  private static WorkerContext begin(String[] args) {
    Map<String, String> config = new LinkedHashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("a benchmark worker takes its configuration as key=value arguments, not '"
            + arg + "'; workers are started by the benchmark driver ('ferry bench ...'), not by hand");
      }
      config.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    WorkerContext ctx = new WorkerContext(env("RANK"), env("WORLD_SIZE"), env("MASTER_PORT"), config);
    long alarmSeconds = Long.parseLong(config.getOrDefault("alarm_s", "300"));
    Thread alarm = new Thread(() -> {
      try {
        Thread.sleep(Duration.ofSeconds(alarmSeconds));
      } catch (InterruptedException e) {
        return;
      }
      System.err.println("worker" + ctx.rank + ": deadline of " + alarmSeconds + " s passed; halting");
      Runtime.getRuntime().halt(124);
    }, "bench-alarm");
    alarm.setDaemon(true);
    alarm.start();
    return ctx;
  }

  /** This worker's rank. */
  public int rank() {
    return rank;
  }

  /** Number of workers in the run. */
  public int world() {
    return world;
  }

  /** Whether the run is a smoke test with reduced counts. */
  public boolean quick() {
    return Boolean.parseBoolean(config.get("quick"));
  }

  /** A string configuration value. */
  public String string(String key) {
    String v = config.get(key);
    if (v == null) {
      throw new IllegalArgumentException("missing configuration key " + key);
    }
    return v;
  }

  /**
   * Backend options for this run: rendezvous at {@code tcp://127.0.0.1:<MASTER_PORT>}; with the
   * driver's {@code --tcp}, TCP only.
   */
  public RpcBackendOptions options(int numWorkerThreads, Duration rpcTimeout) {
    return RpcBackendOptions.builder()
        .initMethod("tcp://127.0.0.1:" + port)
        .numWorkerThreads(numWorkerThreads)
        .rpcTimeout(rpcTimeout)
        .transport(Boolean.parseBoolean(config.get("tcp"))
            ? TransportTuning.defaults().withUnixSockets(false) : TransportTuning.defaults())
        .build();
  }

  /** Starts this worker's agent ({@code worker<rank>}) and returns once the whole group has joined. */
  public RpcAgent startAgent(int numWorkerThreads, Duration rpcTimeout) {
    return RpcAgents.start("worker" + rank, rank, world, options(numWorkerThreads, rpcTimeout));
  }

  /** Prints {@code RESULT <json>} on stdout; the driver keeps the last one of each rank. */
  public void report(Map<String, ?> result) {
    System.out.println("RESULT " + PlainJson.writeLine(result));
    System.out.flush();
  }

  /** Prints a protocol line (W6's {@code READY}, {@code INIT}, ...) and flushes it at once. */
  public void signal(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /** The body of a worker's {@code main}. */
  @FunctionalInterface
  public interface Body {
    /** Runs the worker's part of the workload; throwing fails the run. */
    void run(WorkerContext ctx) throws Exception;
  }

  /**
   * Runs a worker: {@link #begin}, then {@code body}, then ends the JVM at once with code 0 (1 if
   * the body threw, after printing the stack trace), skipping shutdown hooks, as the PyTorch
   * workers leave with {@code os._exit}: the agent has been shut down by then, and neither a hook
   * nor a non-daemon transport thread may keep a finished (or failed) worker alive.
   */
  public static void run(String[] args, Body body) {
    WorkerContext ctx = begin(args);
    int code = 0;
    try {
      body.run(ctx);
    } catch (Throwable t) {
      System.err.println("worker" + ctx.rank + " failed:");
      t.printStackTrace();
      code = 1;
    }
    stopFlightRecordings();
    writePerfMap();
    System.out.flush();
    System.err.flush();
    Runtime.getRuntime().halt(code);
  }

  /**
   * With {@code FERRY_BENCH_PERFMAP=1}, writes {@code /tmp/perf-<pid>.map} (JIT code symbols) before
   * halting, so that Linux {@code perf} can name Java frames of a profile taken during the run.
   */
  private static void writePerfMap() {
    if (System.getenv("FERRY_BENCH_PERFMAP") == null) {
      return;
    }
    try {
      java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(
          new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerPerfmap",
          new Object[] {null}, new String[] {String[].class.getName()});
    } catch (Exception e) {
      System.err.println("cannot write a perf map: " + e);
    }
  }

  /**
   * Halting skips the JVM's own dump at exit: a flight recording started with
   * {@code --jvm-arg=-XX:StartFlightRecording=filename=...} is stopped (and so written) here.
   */
  private static void stopFlightRecordings() {
    try {
      if (jdk.jfr.FlightRecorder.isInitialized()) {
        for (jdk.jfr.Recording recording : jdk.jfr.FlightRecorder.getFlightRecorder().getRecordings()) {
          recording.stop();
        }
      }
    } catch (RuntimeException e) {
      System.err.println("cannot stop a flight recording: " + e);
    }
  }

  private static int env(String name) {
    String v = System.getenv(name);
    if (v == null) {
      throw new IllegalStateException(name + " is not set; workers are started by the benchmark driver");
    }
    return Integer.parseInt(v);
  }
}
