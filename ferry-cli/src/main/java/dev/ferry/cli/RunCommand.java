package dev.ferry.cli;

import dev.ferry.cli.launch.AotCache;
import dev.ferry.cli.launch.ConsoleLineSink;
import dev.ferry.cli.launch.GroupResult;
import dev.ferry.cli.launch.FreePorts;
import dev.ferry.cli.launch.JobRendezvousSpec;
import dev.ferry.cli.launch.MultiNodeRun;
import dev.ferry.cli.launch.RendezvousBackend;
import dev.ferry.cli.launch.WorkerEnvironment;
import dev.ferry.cli.launch.WorkerGroup;
import dev.ferry.cli.launch.WorkerGroupSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code ferry run}: starts {@code --nproc} worker JVMs running {@code MAIN_CLASS}, forwards their
 * output with a {@code [rank]} prefix, stops all of them as soon as one fails, and exits with a
 * code that says how the group ended. Built on {@link WorkerGroup}.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
        "Launch MAIN_CLASS (or -jar JAR's main class) on N local worker JVMs, like torchrun; with --nnodes, on "
            + "every node of a job that spans several hosts (run the same command on each).",
        "",
        "The workers' class path is --classpath (or the jar), followed by Ferry's own libraries when it "
            + "does not hold Ferry itself; without either, the launcher's class path.",
        "Each worker gets the environment variables RANK and LOCAL_RANK (0..N-1), WORLD_SIZE and "
            + "LOCAL_WORLD_SIZE (N), MASTER_ADDR and MASTER_PORT, "
            + "and runs with the JVM flags from jvm.properties plus any --jvm-arg.",
        "The group also gets a fresh random FERRY_AUTH_TOKEN (unless the environment has one): its "
            + "workers and their store accept only connections that prove it.",
        "Worker output is forwarded line by line, prefixed with [rank]. If a worker exits with a "
            + "non-zero code the others are stopped (after up to 1 s to exit on their own, SIGTERM, then "
            + "SIGKILL after the grace period); with "
            + "--worker-restarts K it alone is started again, up to K times per rank, and the others run on.",
        "With --nnodes N (or MIN:MAX), the nodes meet through --rdzv-backend (static: node 0 serves a TCP store at "
            + "--rdzv-endpoint; etcd, zookeeper: the cluster's servers), ranks run across nodes, output is prefixed "
            + "[node1/worker5], a failing worker stops the workers on every node, and --max-restarts K restarts "
            + "the whole world up to K times. Every node needs the same FERRY_AUTH_TOKEN."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:all workers exited with code 0",
        "2:invalid command line",
        "N:exit code N of the first worker that failed, on any node (1 if it is outside 1..255)",
        "1:the workers could not be started, or the nodes could not meet",
        "124:--timeout expired",
        "130:the launcher was interrupted and stopped the workers"})
final class RunCommand implements Callable<Integer> {

  static final int EXIT_START_FAILED = 1;
  static final int EXIT_TIMEOUT = 124;
  static final int EXIT_TERMINATED = 130;

  @Spec private CommandSpec spec;

  @Option(names = {"--nproc", "--nproc-per-node"}, paramLabel = "N", defaultValue = "1",
      description = "Number of worker processes on this node (default: ${DEFAULT-VALUE}).")
  private int nproc;

  @Option(names = "--nnodes", paramLabel = "N|MIN:MAX", defaultValue = "1",
      description = "Number of nodes (hosts) of the job, each running 'ferry run' with the same rendezvous options; "
          + "MIN:MAX with etcd or zookeeper starts once MIN nodes arrived and waits 30 s more for up to MAX; "
          + "a node that arrives later restarts the world with it, up to MAX (default: ${DEFAULT-VALUE}).")
  private String nnodes;

  @Option(names = "--node-rank", paramLabel = "R", defaultValue = "0",
      description = "This node's rank, 0..N-1, with --rdzv-backend static; node 0 serves the rendezvous at "
          + "--rdzv-endpoint (default: ${DEFAULT-VALUE}). etcd and zookeeper rank nodes by arrival.")
  private int nodeRank;

  @Option(names = "--rdzv-backend", paramLabel = "static|etcd|zookeeper", defaultValue = "static",
      description = "How the nodes meet (default: ${DEFAULT-VALUE}).")
  private String rdzvBackend;

  @Option(names = "--rdzv-endpoint", paramLabel = "HOST:PORT",
      description = "static: node 0's address and a free port; etcd / zookeeper: the servers, host:port[,host:port]. "
          + "Required for more than one node.")
  private String rdzvEndpoint;

  @Option(names = "--rdzv-id", paramLabel = "JOB", defaultValue = "none",
      description = "The job's id: nodes with the same id and endpoint form one job (default: ${DEFAULT-VALUE}).")
  private String rdzvId;

  @Option(names = "--max-restarts", paramLabel = "K", defaultValue = "0",
      description = "After a worker fails, stop the workers on every node and restart the whole world, "
          + "up to K times (default: ${DEFAULT-VALUE}).")
  private int maxRestarts;

  @Option(names = "--worker-restarts", paramLabel = "K", defaultValue = "0",
      description = "On one node: start a worker that fails again alone, under its rank, up to K times per rank, "
          + "while the others run on; it rejoins the running world as a new incarnation, and the launcher serves "
          + "the workers' store (default: ${DEFAULT-VALUE}: a failure stops the group). A worker that fails when no "
          + "other rank runs ends the run: its world has ended. Not with --max-restarts, which restarts the whole world.")
  private int workerRestarts;

  @Option(names = "--local-addr", paramLabel = "ADDR",
      description = "The address other nodes reach this node's workers at (default: this host's address "
          + "on the route to --rdzv-endpoint).")
  private String localAddr;

  @Option(names = "--master-addr", paramLabel = "ADDR", defaultValue = "127.0.0.1",
      description = "Address of rank 0's rendezvous endpoint, MASTER_ADDR (default: ${DEFAULT-VALUE}).")
  private String masterAddr;

  @Option(names = "--master-port", paramLabel = "PORT",
      description = "Rendezvous port, MASTER_PORT (default: a free port on 127.0.0.1).")
  private Integer masterPort;

  @Option(names = {"--classpath", "-cp"}, paramLabel = "CP",
      description = "Class path of the workers' program: directories, jars, DIR/* (default: the launcher's class path).")
  private String classpath;

  @Option(names = "-jar", paramLabel = "JAR", parameterConsumer = JarThenProgramArguments.class,
      description = "Run the main class named by JAR's manifest, with JAR (and its manifest's Class-Path) as the "
          + "program's class path; as for java, everything after JAR goes to the workers.")
  private Path jar;

  /** {@code -jar JAR ARGS...}: as {@code java -jar}, what follows the jar is the program's, options included. */
  static final class JarThenProgramArguments implements CommandLine.IParameterConsumer {
    @Override
    public void consumeParameters(java.util.Stack<String> rest, CommandLine.Model.ArgSpec jarOption,
        CommandSpec command) {
      if (rest.isEmpty()) {
        throw new CommandLine.ParameterException(command.commandLine(), "Missing JAR after -jar");
      }
      jarOption.setValue(Path.of(rest.pop()));
      RunCommand run = (RunCommand) command.userObject();
      while (!rest.isEmpty()) {
        run.args.add(rest.pop());
      }
    }
  }

  @Option(names = "--jvm-arg", paramLabel = "ARG",
      description = "Extra JVM option for every worker, repeatable, e.g. --jvm-arg=-Xmx1g.")
  private List<String> jvmArgs = new ArrayList<>();

  @Option(names = "--timeout", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "Stop all workers and fail if they have not finished after DURATION (e.g. 90s, 5m, 1h30m).")
  private Duration timeout;

  @Option(names = "--grace-period", paramLabel = "DURATION", converter = DurationConverter.class,
      defaultValue = "5s",
      description = "How long stopping workers may take after SIGTERM before SIGKILL (default: ${DEFAULT-VALUE}).")
  private Duration gracePeriod;

  @Option(names = "--aot-cache", paramLabel = "DIR",
      description = "Where workers' ahead-of-time caches (classes and method profiles, JDK 25+) are kept: the first "
          + "run of a program trains one, later runs start warm (default: $FERRY_AOT_CACHE, else ~/.cache/ferry/aot).")
  private Path aotCacheDir;

  @Option(names = "--no-aot-cache", description = "Neither use nor train an ahead-of-time cache.")
  private boolean noAotCache;

  @Option(names = "--eager-jit",
      description = "Workers starting from an ahead-of-time cache compile what its training run found hot at once "
          + "(JDK 25): full speed sooner, compiler threads busy for a second or two after start "
          + "(default: $FERRY_EAGER_JIT, else off).")
  private boolean eagerJit;

  @Option(names = "--status-port", paramLabel = "PORT", defaultValue = "0",
      description = "Port of the group's live status page on 127.0.0.1, printed at start (default: a free port).")
  private int statusPort;

  @Option(names = "--no-status", description = "Serve no status page (the workers then report nowhere).")
  private boolean noStatus;

  @Option(names = "--no-prefix", description = "Forward worker output without the [rank] prefix.")
  private boolean noPrefix;

  @Parameters(index = "0", arity = "0..1", paramLabel = "MAIN_CLASS",
      description = "Fully qualified main class of the workers (not with -jar).")
  private String mainClass;

  @Parameters(index = "1..*", paramLabel = "ARGS", description = "Arguments passed to every worker's main.")
  private List<String> args = new ArrayList<>();

  private final PrintStream out;
  private final PrintStream err;

  RunCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() {
    WorkerGroupSpec groupSpec = groupSpec();
    JobRendezvousSpec job = jobSpec();
    // Every worker would fail alike on a missing class or main method; say it once, before starting any.
    ClassPath workersClassPath = ClassPath.of(groupSpec.classpath());
    if (!workersClassPath.contains(groupSpec.mainClass())) {
      err.println("ferry run: main class " + groupSpec.mainClass() + " is not on the workers' class path"
          + (classpath == null && jar == null
              ? " (the launcher's, which they inherit); pass --classpath or -jar, or build the module that contains it"
              : " (" + (jar != null ? "-jar " + jar : "--classpath " + classpath) + ")")
          + slipsIn(workersClassPath, groupSpec.mainClass()));
      return EXIT_START_FAILED;
    }
    if (workersClassPath.surelyLacksMainMethod(groupSpec.mainClass())) {
      err.println("ferry run: main class " + groupSpec.mainClass() + " has no main method, so every worker would fail"
          + " to start it; declare public static void main(String[] args) (or, since JDK 25, a non-private void main())");
      return EXIT_START_FAILED;
    }
    if (job != null) {
      MultiNodeRun run = new MultiNodeRun(job, groupSpec, maxRestarts, timeout, out, err);
      StopWorkersOnShutdown hook = new StopWorkersOnShutdown(run::close, err);
      hook.register();
      try {
        return run.call();
      } finally {
        hook.unregister();
      }
    }
    WorkerGroup group = new WorkerGroup(groupSpec);
    StopWorkersOnShutdown hook = new StopWorkersOnShutdown(group::close, err);
    hook.register();
    try {
      group.start();
      group.statusPage().ifPresent(page -> err.println("ferry run: status page at " + page));
      GroupResult result = timeout == null ? group.awaitCompletion() : group.awaitCompletion(timeout);
      report(result);
      return exitCode(result);
    } catch (IOException e) {
      err.println("ferry run: " + e.getMessage());
      return EXIT_START_FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("ferry run: interrupted; stopping the workers");
      return EXIT_TERMINATED;
    } finally {
      group.close();
      hook.unregister();
    }
  }

  private WorkerGroupSpec groupSpec() {
    CommandLine commandLine = spec.commandLine();
    if (nproc < 1) {
      throw new CommandLine.ParameterException(commandLine, "--nproc must be at least 1, but was " + nproc);
    }
    if (masterPort != null && (masterPort < 1 || masterPort > 65535)) {
      throw new CommandLine.ParameterException(commandLine, "--master-port must be in 1..65535, but was " + masterPort);
    }
    if (!noStatus && (statusPort < 0 || statusPort > 65535)) {
      throw new CommandLine.ParameterException(commandLine, "--status-port must be in 0..65535, but was " + statusPort);
    }
    if (workerRestarts < 0) {
      throw new CommandLine.ParameterException(commandLine, "--worker-restarts must not be negative, got " + workerRestarts);
    }
    if (workerRestarts > 0 && (maxRestarts > 0 || !"1".equals(nnodes))) {
      throw new CommandLine.ParameterException(commandLine, "--worker-restarts restarts one worker on one node; it does"
          + " not go with --nnodes or --max-restarts (which restart the whole world)");
    }
    if (timeout != null && timeout.isZero()) {
      throw new CommandLine.ParameterException(commandLine, "--timeout must be longer than 0");
    }
    if (jar != null && classpath != null) {
      throw new CommandLine.ParameterException(commandLine, "-jar and --classpath exclude each other (as for java)");
    }
    if (jar == null && mainClass == null) {
      throw new CommandLine.ParameterException(commandLine, "Missing required parameter: 'MAIN_CLASS' (or -jar JAR)");
    }
    try {
      String main = mainClass;
      ClassPath program = classpath == null ? null : ClassPath.of(classpath);
      if (jar != null) {
        ClassPath.Executable executable = ClassPath.ofJar(jar);
        program = executable.classPath();
        main = executable.mainClass();
        if (mainClass != null) {
          throw new CommandLine.ParameterException(commandLine, "-jar takes the main class from the jar's manifest, "
              + "but MAIN_CLASS " + mainClass + " came before it");
        }
      }
      WorkerGroupSpec.Builder builder = WorkerGroupSpec.builder()
          .nproc(nproc)
          .mainClass(main)
          .args(args)
          .jvmArgs(jvmArgs)
          .masterAddr(masterAddr)
          .terminationGrace(gracePeriod)
          .statusPort(noStatus ? -1 : statusPort)
          .workerRestarts(workerRestarts)
          .sink(ConsoleLineSink.to(out, err, !noPrefix));
      if (masterPort != null) {
        builder.masterPort(masterPort);
      }
      if (program != null) {
        builder.classpath(withFerry(program, ClassPath.ofThisJvm()).toString());
      }
      if (!noAotCache) {
        Optional<Path> dir = aotCacheDir != null ? Optional.of(aotCacheDir) : AotCache.defaultDirectory();
        boolean eager = eagerJit || AotCache.eagerCompilationFromEnvironment();
        dir.map(AotCache::in).filter(AotCache::supported).map(cache -> cache.withEagerCompilation(eager))
            .ifPresent(builder::aotCache);
      }
      return builder.build();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(commandLine, e.getMessage(), e);
    }
  }

  /** The rendezvous of a multi-node (or restartable) job, or null for a plain single-node launch. */
  private JobRendezvousSpec jobSpec() {
    CommandLine commandLine = spec.commandLine();
    RendezvousBackend backend;
    int minNodes;
    int maxNodes;
    try {
      backend = RendezvousBackend.fromName(rdzvBackend);
      String[] range = nnodes.split(":", -1);
      minNodes = Integer.parseInt(range[0]);
      maxNodes = Integer.parseInt(range[range.length - 1]);
      if (range.length > 2) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      throw new CommandLine.ParameterException(commandLine, "--nnodes must be N or MIN:MAX, got '" + nnodes + "'");
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(commandLine, e.getMessage());
    }
    if (maxNodes == 1 && backend == RendezvousBackend.STATIC && maxRestarts == 0 && rdzvEndpoint == null) {
      return null;
    }
    if (maxRestarts < 0) {
      throw new CommandLine.ParameterException(commandLine, "--max-restarts must not be negative, got " + maxRestarts);
    }
    String endpoint = rdzvEndpoint;
    if (endpoint == null && maxNodes > 1) {
      throw new CommandLine.ParameterException(commandLine, "--nnodes " + nnodes + " needs --rdzv-endpoint HOST:PORT");
    }
    if (endpoint == null) {
      endpoint = "127.0.0.1:" + FreePorts.pick(); // restarts on one node: a private store on loopback
    }
    JobRendezvousSpec job;
    try {
      job = new JobRendezvousSpec(backend, endpoint, rdzvId, minNodes, maxNodes,
          backend.dynamic() ? -1 : nodeRank, localAddr, null);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(commandLine, e.getMessage(), e);
    }
    String token = System.getenv(WorkerEnvironment.FERRY_AUTH_TOKEN);
    if (token == null || token.isBlank()) {
      if (maxNodes > 1) {
        // Launchers on different hosts cannot each make up the group's secret.
        throw new CommandLine.ParameterException(commandLine, "a job on more than one node needs the same "
            + "FERRY_AUTH_TOKEN on every node, e.g. export FERRY_AUTH_TOKEN=$(openssl rand -base64 32) once and "
            + "pass it to each host (your scheduler's secret store, or the batch script)");
      }
      token = WorkerEnvironment.newAuthToken();
    }
    return new JobRendezvousSpec(job.backend(), job.endpoint(), job.runId(), job.minNodes(), job.maxNodes(),
        job.nodeRank(), job.localAddress(), token);
  }

  /** What may have gone wrong when the main class is missing: a directory of jars without /*, a file name. */
  private static String slipsIn(ClassPath workers, String mainClass) {
    StringBuilder hints = new StringBuilder();
    for (Path directory : workers.directoriesOfJars()) {
      hints.append("; ").append(directory).append(" holds jars, which java reads only as ")
          .append(directory.resolve("*"));
    }
    if (mainClass.endsWith(".class")) {
      hints.append("; a main class is named without .class: ")
          .append(mainClass, 0, mainClass.length() - ".class".length());
    }
    return hints.toString();
  }

  /**
   * The workers' class path for a program's own: torchrun's workers find torch where it is
   * installed, and a Ferry program finds Ferry where the launcher has it, unless it brings its own
   * (then the launcher adds nothing, so two versions never mix).
   */
  static ClassPath withFerry(ClassPath program, ClassPath launcher) {
    if (program.contains(ClassPath.FERRY_CORE_CLASS) || !launcher.contains(ClassPath.FERRY_CORE_CLASS)) {
      return program;
    }
    return program.then(launcher);
  }

  private void report(GroupResult result) {
    if (result.succeeded()) {
      err.println("ferry run: " + result.headline());
    } else {
      err.println("ferry run: " + result.summary());
    }
  }

  static int exitCode(GroupResult result) {
    return switch (result.outcome()) {
      case SUCCEEDED -> 0;
      case FAILED -> {
        int code = result.failure().orElseThrow().exitCode();
        yield code >= 1 && code <= 255 ? code : 1;
      }
      case TIMED_OUT -> EXIT_TIMEOUT;
      case TERMINATED -> EXIT_TERMINATED;
    };
  }
}
