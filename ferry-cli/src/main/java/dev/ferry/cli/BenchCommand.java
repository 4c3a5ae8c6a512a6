package dev.ferry.cli;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code ferry bench}: runs the benchmark harness's {@code main} in this JVM with all arguments
 * passed through. The class is loaded by name because ferry-cli must not depend on ferry-bench
 * (ferry-bench depends on ferry-cli to launch its worker JVMs).
 */
@Command(
    name = "bench",
    description = {
        "Run the benchmark harness (dev.ferry.bench.BenchMain); all ARGS are passed to it.",
        "Use 'ferry bench --help' for the harness's own options."})
final class BenchCommand implements Callable<Integer> {

  static final String BENCH_MAIN = "dev.ferry.bench.BenchMain";

  @Parameters(paramLabel = "ARGS", arity = "0..*", description = "Arguments for the benchmark harness.")
  private List<String> args = new ArrayList<>();

  private final String mainClass;
  private final PrintStream err;

  BenchCommand(String mainClass, PrintStream err) {
    this.mainClass = mainClass;
    this.err = err;
  }

  @Override
  public Integer call() throws Exception {
    Method main;
    try {
      Class<?> type = Class.forName(mainClass, true, Thread.currentThread().getContextClassLoader());
      main = type.getMethod("main", String[].class);
    } catch (ClassNotFoundException e) {
      // The binary distribution lists this command too but leaves ferry-bench out of its lib/.
      err.println("ferry bench: " + mainClass + " is not on the class path; build ferry-bench ('./ferry build') "
          + "and start through the ferry script of a source checkout, whose class path includes ferry-bench/target "
          + "(the binary distribution does not include the benchmarks)");
      return 1;
    } catch (NoSuchMethodException e) {
      err.println("ferry bench: " + mainClass + " has no public main(String[]) method");
      return 1;
    }
    if (!Modifier.isStatic(main.getModifiers())) {
      err.println("ferry bench: " + mainClass + ".main(String[]) is not static");
      return 1;
    }
    try {
      main.invoke(null, (Object) args.toArray(String[]::new));
      return 0;
    } catch (InvocationTargetException e) {
      // Rethrow the harness's own exception, not the reflective wrapper; picocli prints it and exits 1.
      Throwable cause = e.getCause();
      if (cause instanceof Exception ex) {
        throw ex;
      }
      throw (Error) cause;
    }
  }
}
