package dev.ferry.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code ferry} command line: {@code ferry run} launches a local group of worker JVMs (like
 * {@code torchrun} on one node) and {@code ferry bench} runs the benchmark harness.
 *
 * <pre>
 * ferry run --nproc 3 dev.ferry.examples.HelloCluster
 * ferry run --nproc 2 --timeout 5m --jvm-arg -Xmx1g my.app.Train --epochs 3
 * ferry bench --help
 * ferry jfr summary worker0.jfr
 * ferry --version
 * </pre>
 *
 * <p>Normally started by the {@code ferry} script, which supplies a JDK 25+, the JVM flags from
 * {@code jvm.properties} and a class path with the examples and benchmarks. Embedders and tests
 * call {@link #execute(String[], PrintStream, PrintStream)} instead of {@link #main}.
 */
@Command(
    name = "ferry",
    mixinStandardHelpOptions = true,
    versionProvider = FerryVersion.class,
    description = "Ferry: distributed RPC, remote references and distributed autograd for the JVM.",
    subcommands = CommandLine.HelpCommand.class)
public final class FerryCli implements Runnable {

  @Spec private CommandSpec spec;

  private FerryCli() {}

  // The etcd store's client (gRPC) logs through java.util.logging at INFO, in a two-line format of its
  // own, before any launcher line; its warnings still show. Held: the JDK keeps loggers weakly.
  private static final java.util.logging.Logger GRPC_LOG = java.util.logging.Logger.getLogger("io.grpc");

  /** Runs the command line and exits the JVM with its exit code. */
  public static void main(String[] args) {
    GRPC_LOG.setLevel(java.util.logging.Level.WARNING);
    System.exit(execute(args, System.out, System.err));
  }

  /**
   * Runs the command line without exiting the JVM and returns the exit code: 0 on success, 2 for
   * a usage error, otherwise as documented by the subcommand ({@code ferry run --help}).
   *
   * @param out where usage, version and the workers' stdout go
   * @param err where errors, reports and the workers' stderr go
   */
  public static int execute(String[] args, PrintStream out, PrintStream err) {
    CommandLine cli = new CommandLine(new FerryCli())
        .addSubcommand(new RunCommand(out, err))
        .addSubcommand(new BenchCommand(BenchCommand.BENCH_MAIN, err))
        .addSubcommand(new CommandLine(new JfrCommand())
            .addSubcommand(new JfrCommand.Summary(out, err)));
    // Everything after MAIN_CLASS belongs to the worker program, options included.
    cli.getSubcommands().get("run").setStopAtPositional(true);
    // The benchmark harness parses its own options (including --help).
    cli.getSubcommands().get("bench").setUnmatchedOptionsArePositionalParams(true);
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    cli.setParameterExceptionHandler(FerryCli::usageError);
    return cli.execute(args);
  }

  /**
   * A command line that cannot be parsed: the message, then where to read more. Picocli's default
   * prints the command's whole help after the message, and {@code ferry run}'s runs to a hundred
   * lines, so the one line that says what is wrong scrolled away above them. A command that lists
   * subcommands ({@code ferry}, {@code ferry jfr}) keeps its short usage: it says what to type.
   */
  private static int usageError(CommandLine.ParameterException e, String[] args) {
    CommandLine command = e.getCommandLine();
    PrintWriter err = command.getErr();
    err.println(command.getCommandSpec().qualifiedName() + ": " + e.getMessage());
    CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
    if (!command.getSubcommands().isEmpty()) {
      command.usage(err);
    } else {
      err.println("See '" + command.getCommandSpec().qualifiedName() + " --help' for its options.");
    }
    return command.getCommandSpec().exitCodeOnInvalidInput();
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: use 'run', 'jfr' or 'bench' (see --help)");
  }
}
