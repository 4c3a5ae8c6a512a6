package dev.ferry.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Parameters;

/**
 * {@code ferry jfr summary FILE}: a per-function table of the Ferry events in a Flight Recorder
 * file ({@code dev.ferry.rpc.Call}, {@code dev.ferry.rpc.Request}), as {@link JfrSummary} reads them.
 */
@Command(
    name = "jfr",
    mixinStandardHelpOptions = true,
    description = "Read JDK Flight Recorder files of Ferry workers.")
final class JfrCommand implements Runnable {

  @Spec private CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(spec.commandLine(), "Missing command: use 'summary' (see --help)");
  }

  @Command(
      name = "summary",
      mixinStandardHelpOptions = true,
      description = {
          "Print a per-function table of the Ferry calls and requests recorded in FILE: count, failures, "
              + "total, mean, p50, p99 and max time, request bytes.",
          "Record with -XX:StartFlightRecording=filename=FILE (or jcmd PID JFR.start): Ferry's events "
              + "dev.ferry.rpc.Call and dev.ferry.rpc.Request are on in the default settings."},
      exitCodeListHeading = "%nExit codes:%n",
      exitCodeList = {"0:the table was printed", "1:FILE could not be read", "2:invalid command line"})
  static final class Summary implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "A .jfr recording.")
    private Path file;

    private final PrintStream out;
    private final PrintStream err;

    Summary(PrintStream out, PrintStream err) {
      this.out = out;
      this.err = err;
    }

    @Override
    public Integer call() {
      if (!Files.isReadable(file)) {
        err.println("ferry jfr summary: cannot read " + file);
        return 1;
      }
      try {
        JfrSummary summary = JfrSummary.read(file);
        out.print(summary.table());
        return 0;
      } catch (IOException | RuntimeException e) {
        err.println("ferry jfr summary: " + file + " is not a readable Flight Recorder file: " + e.getMessage());
        return 1;
      }
    }
  }
}
