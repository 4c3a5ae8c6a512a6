package dev.ferry.cli.launch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Turns a {@link WorkerGroupSpec} into the {@link ProcessBuilder} of one rank. */
final class WorkerCommand {

  private WorkerCommand() {}

  /** The command line, identical for every rank but for the AOT cache flags. */
  static List<String> commandLine(WorkerGroupSpec spec, int rank) {
    List<String> command = new ArrayList<>();
    command.add(spec.javaExecutable().toString());
    command.addAll(spec.jvmFlags());
    command.addAll(spec.jvmArgs());
    spec.aotCache().ifPresent(cache -> command.addAll(cache.flagsFor(spec, rank)));
    command.add("-cp");
    command.add(spec.classpath());
    command.add(spec.mainClass());
    command.addAll(spec.args());
    return command;
  }

  /**
   * A process builder for {@code rank}, with its environment and redirections set; {@code authToken}
   * (null: none) goes into {@link WorkerEnvironment#FERRY_AUTH_TOKEN}, {@code statusUrl} (null: none)
   * into {@link WorkerEnvironment#FERRY_STATUS_URL}.
   */
  static ProcessBuilder forRank(WorkerGroupSpec spec, int rank, int masterPort, String authToken, String statusUrl) {
    ProcessBuilder builder = new ProcessBuilder(commandLine(spec, rank));
    Map<String, String> env = builder.environment();
    env.putAll(spec.env());
    env.putAll(WorkerEnvironment.forWorker(rank, spec.nproc(), spec.placement(), spec.masterAddr(), masterPort));
    if (authToken != null) {
      env.put(WorkerEnvironment.FERRY_AUTH_TOKEN, authToken);
    }
    if (statusUrl != null) {
      env.put(WorkerEnvironment.FERRY_STATUS_URL, statusUrl);
    }
    env.put(WorkerEnvironment.FERRY_APPLICATION_PACKAGES, WorkerEnvironment.applicationPackages(spec.mainClass(),
        env.get(WorkerEnvironment.FERRY_APPLICATION_PACKAGES)));
    spec.directory().ifPresent(dir -> builder.directory(dir.toFile()));
    builder.redirectOutput(redirect(spec.stdout()));
    builder.redirectError(redirect(spec.stderr()));
    builder.redirectInput(ProcessBuilder.Redirect.PIPE);
    return builder;
  }

  private static ProcessBuilder.Redirect redirect(OutputMode mode) {
    return mode == OutputMode.DISCARD ? ProcessBuilder.Redirect.DISCARD : ProcessBuilder.Redirect.PIPE;
  }
}
