package dev.ferry.bench;

import dev.ferry.bench.harness.BenchOptions;
import dev.ferry.bench.workload.W1Latency;
import dev.ferry.bench.workload.W2AsyncThroughput;
import dev.ferry.bench.workload.W3TensorEcho;
import dev.ferry.bench.workload.W4RRef;
import dev.ferry.bench.workload.W5DistAutograd;
import dev.ferry.bench.workload.W5Worker;
import dev.ferry.bench.workload.W6InitShutdown;
import dev.ferry.bench.workload.PipelineTraining;
import dev.ferry.bench.workload.W7Nested;
import dev.ferry.bench.workload.W8SmallBehindLarge;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Entry point of {@code ./ferry bench}: runs workloads of {@code bench/WORKLOADS.md} against
 * Ferry and writes result files that {@code bench/pytorch/report.py --results DIR:ferry} prints
 * next to PyTorch's.
 *
 * <pre>
 * ./ferry bench w1 --repeats 5                 # W1, 5 runs, results in bench-results/w1_latency.json
 * ./ferry bench all --out /tmp/ferry-results   # W1 to W7
 * ./ferry bench w7 --parts chain               # W7a only
 * ./ferry bench compute ...                    # local compute benchmark, if built in
 * </pre>
 */
public final class BenchMain {

  static final String USAGE = """
      usage: ferry bench WORKLOAD... [--repeats N] [--quick] [--out DIR] [--timeout SECONDS]
                                     [--parts chain,probe_sync,probe_async] [--jvm-arg OPTION]... [--tcp]
             ferry bench compute ARGS...
        WORKLOAD   one or more of these (bench/WORKLOADS.md; W8: ferry-bench/README.md), or all:
                     w1  rpcSync round trip              w5  a training step: distributed autograd
                     w2  rpcAsync with a window of calls     and a DistributedOptimizer
                     w3  tensor echo, 1 KiB to 128 MiB   w6  init + shutdown, 2, 4 and 8 workers
                     w4  remote() + RRef.toHere()        w7  nested calls, thread-pool exhaustion
                                                         w8  small calls behind 128 MiB echoes
                   and, not in all: w5long    W5 with 3,000 timed steps
                                    w5heavy   W5 on 1024 -> 1024 -> 1024 -> 10, batch 256
                                    pipeline  tutorial 4's model without pipelining, then with 4
                                              micro-batches: the tutorial's way, GPipe, 1F1B
        --repeats  independent runs, fresh worker JVMs each (default 5)
        --quick    tiny counts, to smoke-test the harness (writes *_quick.json)
        --out      result folder (default bench-results/)
        --timeout  per-run hard timeout, replacing each workload's default
        --parts    W7 parts to run (default all three)
        --jvm-arg  extra JVM option for every worker, repeatable (e.g. --jvm-arg=-Xlog:gc); for
                   diagnostics, recorded in the result file
        --tcp      workers talk over loopback TCP only (no Unix socket, no shared memory), as
                   PyTorch's tcp mode; recorded in the result file
        compute    runs dev.ferry.bench.compute.LocalComputeBench with ARGS, when it is built in
      """;

  static final List<String> ALL = List.of("w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8");
  /** Workloads that run only when named: variants, and workloads of ferry-bench's own. */
  static final List<String> NAMED_ONLY = List.of("w5long", "w5heavy", "pipeline");
  static final String COMPUTE_MAIN = "dev.ferry.bench.compute.LocalComputeBench";

  private BenchMain() {}

  /** Parsed command line. */
  record Command(List<String> workloads, BenchOptions options, Set<String> parts) {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("compute")) {
      runCompute(List.of(args).subList(1, args.length).toArray(String[]::new));
      return;
    }
    Command command;
    try {
      command = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("ferry bench: " + e.getMessage());
      System.err.print(USAGE);
      System.exit(2);
      return;
    }
    if (command == null) {
      System.out.print(USAGE);
      return;
    }
    for (String w : command.workloads()) {
      System.out.println("=== " + w + " (" + command.options().repeats() + " runs"
          + (command.options().quick() ? ", quick" : "") + ") ===");
      switch (w) {
        case "w1" -> W1Latency.run(command.options());
        case "w2" -> W2AsyncThroughput.run(command.options());
        case "w3" -> W3TensorEcho.run(command.options());
        case "w4" -> W4RRef.run(command.options());
        case "w5" -> W5DistAutograd.run(command.options());
        case "w6" -> W6InitShutdown.run(command.options());
        case "w7" -> W7Nested.run(command.options(), command.parts());
        case "w8" -> W8SmallBehindLarge.run(command.options());
        case "w5long" -> W5DistAutograd.run(command.options(), W5Worker.Variant.LONG);
        case "w5heavy" -> W5DistAutograd.run(command.options(), W5Worker.Variant.HEAVY);
        case "pipeline" -> PipelineTraining.run(command.options());
        default -> throw new IllegalStateException("unknown workload " + w);
      }
    }
  }

  /** Parses the arguments; null means help was asked for. */
  static Command parse(String[] args) {
    List<String> workloads = new ArrayList<>();
    int repeats = 5;
    boolean quick = false;
    Path out = Path.of("bench-results");
    Duration timeout = null;
    Set<String> parts = new LinkedHashSet<>(W7Nested.PARTS);
    List<String> jvmArgs = new ArrayList<>();
    boolean tcp = false;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.startsWith("--jvm-arg=")) {
        jvmArgs.add(a.substring("--jvm-arg=".length()));
        continue;
      }
      switch (a) {
        case "-h", "--help" -> {
          return null;
        }
        case "--quick" -> quick = true;
        case "--tcp" -> tcp = true;
        case "--repeats" -> repeats = positive(a, value(args, ++i, a));
        case "--out" -> out = Path.of(value(args, ++i, a));
        case "--jvm-arg" -> jvmArgs.add(value(args, ++i, a));
        case "--timeout" -> timeout = Duration.ofSeconds(positive(a, value(args, ++i, a)));
        case "--parts" -> {
          parts = new LinkedHashSet<>(List.of(value(args, ++i, a).split(",")));
          if (!W7Nested.PARTS.containsAll(parts)) {
            throw new IllegalArgumentException("--parts takes a comma list of " + W7Nested.PARTS + ", got " + parts);
          }
        }
        case "all" -> workloads.addAll(ALL);
        default -> {
          if (a.startsWith("-")) {
            throw new IllegalArgumentException("unknown option " + a);
          }
          if (!ALL.contains(a) && !NAMED_ONLY.contains(a)) {
            throw new IllegalArgumentException("unknown workload '" + a + "' (expected one of " + ALL
                + ", all, one of " + NAMED_ONLY + " or compute)");
          }
          workloads.add(a);
        }
      }
    }
    if (workloads.isEmpty()) {
      throw new IllegalArgumentException("no workload given");
    }
    return new Command(List.copyOf(new LinkedHashSet<>(workloads)), new BenchOptions(repeats, quick, out, timeout, jvmArgs, tcp),
        parts);
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  private static int positive(String option, String value) {
    try {
      int v = Integer.parseInt(value);
      if (v < 1) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " needs a positive integer, got '" + value + "'");
    }
  }

  /**
   * Runs the local compute benchmark, which lives in {@code dev.ferry.bench.compute} and is built
   * separately; it is loaded by name so that this harness builds with or without it.
   */
  static void runCompute(String[] args) throws Exception {
    Method main;
    try {
      main = Class.forName(COMPUTE_MAIN).getMethod("main", String[].class);
    } catch (ClassNotFoundException e) {
      System.err.println("ferry bench compute: " + COMPUTE_MAIN + " is not on the class path;"
          + " this build of ferry-bench does not include the compute benchmark (package dev.ferry.bench.compute)");
      System.exit(2);
      return;
    }
    try {
      main.invoke(null, (Object) args);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof Exception ex) {
        throw ex;
      }
      throw (Error) e.getCause();
    }
  }
}
