package dev.ferry.bench.harness;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Options common to every workload.
 *
 * @param repeats independent runs, each with fresh worker JVMs
 * @param quick tiny counts, for smoke-testing the harness only (results go to {@code *_quick.json})
 * @param outDir folder of the result files
 * @param timeout per-run hard timeout replacing the workload's default, or null
 * @param workerJvmArgs extra JVM options for every worker (diagnostics such as {@code -Xlog:gc}),
 *     after the workload's own; recorded in the result file's params
 * @param tcp workers talk over loopback TCP only (no Unix sockets, no shared memory): the
 *     configuration beside PyTorch's {@code tcp} mode; recorded in the result file's params
 */
public record BenchOptions(int repeats, boolean quick, Path outDir, Duration timeout, List<String> workerJvmArgs,
                           boolean tcp) {

  public BenchOptions {
    workerJvmArgs = List.copyOf(workerJvmArgs);
  }

  /** The run timeout: the override if given, else the workload's default. */
  public Duration timeoutOr(Duration workloadDefault) {
    return timeout != null ? timeout : workloadDefault;
  }
}
