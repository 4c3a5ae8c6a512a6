package dev.ferry.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
          "Print a per-function table of the Ferry calls and requests recorded in the FILEs (one table over all "
              + "of them): count, failures, total, mean, p50, p99 and max time, request bytes.",
          "Record with -XX:StartFlightRecording=filename=FILE (or jcmd PID JFR.start): Ferry's events "
              + "dev.ferry.rpc.Call and dev.ferry.rpc.Request are on in the default settings. For the workers of "
              + "'ferry run', put %p in the name (--jvm-arg=-XX:StartFlightRecording=filename=worker-%p.jfr): "
              + "with one name for all, each worker overwrites the others' recording."},
      exitCodeListHeading = "%nExit codes:%n",
      exitCodeList = {"0:the table was printed", "1:a FILE could not be read", "2:invalid command line"})
  static final class Summary implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "FILE", description = "A .jfr recording, or several (worker-*.jfr).")
    private List<Path> files;

    private final PrintStream out;
    private final PrintStream err;

    Summary(PrintStream out, PrintStream err) {
      this.out = out;
      this.err = err;
    }

    @Override
    public Integer call() {
      for (Path file : files) {
        if (!Files.isReadable(file)) {
          err.println("ferry jfr summary: cannot read " + file);
          return 1;
        }
      }
      try {
        out.print(JfrSummary.read(files).table());
        return 0;
      } catch (JfrSummary.Unreadable e) {
        err.println("ferry jfr summary: " + e.file() + " is not a readable Flight Recorder file: " + e.getMessage());
        return 1;
      }
    }
  }
}
