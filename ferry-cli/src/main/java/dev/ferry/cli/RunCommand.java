package dev.ferry.cli;

import dev.ferry.cli.launch.AotCache;
import dev.ferry.cli.launch.ConsoleLineSink;
import dev.ferry.cli.launch.GroupResult;
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
        "Launch MAIN_CLASS on N local worker JVMs, like torchrun on a single node.",
        "",
        "Each worker gets the environment variables RANK and LOCAL_RANK (0..N-1), WORLD_SIZE and "
            + "LOCAL_WORLD_SIZE (N), MASTER_ADDR, MASTER_PORT and FERRY_INIT_METHOD=env://, "
            + "and runs with the JVM flags from jvm.properties plus any --jvm-arg.",
        "The group also gets a fresh random FERRY_AUTH_TOKEN (unless the environment has one): its "
            + "workers and their store accept only connections that prove it.",
        "Worker output is forwarded line by line, prefixed with [rank]. If a worker exits with a "
            + "non-zero code the others are stopped (SIGTERM, then SIGKILL after the grace period)."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:all workers exited with code 0",
        "2:invalid command line",
        "N:exit code N of the first worker that failed (1 if it is outside 1..255)",
        "1:the workers could not be started",
        "124:--timeout expired",
        "130:the launcher was interrupted and stopped the workers"})
final class RunCommand implements Callable<Integer> {

  static final int EXIT_START_FAILED = 1;
  static final int EXIT_TIMEOUT = 124;
  static final int EXIT_TERMINATED = 130;

  @Spec private CommandSpec spec;

  @Option(names = "--nproc", paramLabel = "N", defaultValue = "1",
      description = "Number of worker processes (default: ${DEFAULT-VALUE}).")
  private int nproc;

  @Option(names = "--master-addr", paramLabel = "ADDR", defaultValue = "127.0.0.1",
      description = "Address of rank 0's rendezvous endpoint, MASTER_ADDR (default: ${DEFAULT-VALUE}).")
  private String masterAddr;

  @Option(names = "--master-port", paramLabel = "PORT",
      description = "Rendezvous port, MASTER_PORT (default: a free port on 127.0.0.1).")
  private Integer masterPort;

  @Option(names = {"--classpath", "-cp"}, paramLabel = "CP",
      description = "Class path of the workers (default: the launcher's class path).")
  private String classpath;

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

  @Option(names = "--no-prefix", description = "Forward worker output without the [rank] prefix.")
  private boolean noPrefix;

  @Parameters(index = "0", paramLabel = "MAIN_CLASS", description = "Fully qualified main class of the workers.")
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
    if (classpath == null && !onOwnClasspath(mainClass)) {
      // Workers share our class path, so each of them would fail the same way; say it once.
      err.println("ferry run: main class " + mainClass + " is not on the class path of the launcher, "
          + "which the workers inherit; pass --classpath or build the module that contains it");
      return EXIT_START_FAILED;
    }
    WorkerGroup group = new WorkerGroup(groupSpec);
    StopWorkersOnShutdown hook = new StopWorkersOnShutdown(group, err);
    hook.register();
    try {
      group.start();
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
    if (timeout != null && timeout.isZero()) {
      throw new CommandLine.ParameterException(commandLine, "--timeout must be longer than 0");
    }
    try {
      WorkerGroupSpec.Builder builder = WorkerGroupSpec.builder()
          .nproc(nproc)
          .mainClass(mainClass)
          .args(args)
          .jvmArgs(jvmArgs)
          .masterAddr(masterAddr)
          .terminationGrace(gracePeriod)
          .sink(ConsoleLineSink.to(out, err, !noPrefix));
      if (masterPort != null) {
        builder.masterPort(masterPort);
      }
      if (classpath != null) {
        builder.classpath(classpath);
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

  private static boolean onOwnClasspath(String className) {
    try {
      Class.forName(className, false, RunCommand.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    } catch (LinkageError e) {
      return true; // it is there; the worker will report why it cannot be loaded
    }
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
