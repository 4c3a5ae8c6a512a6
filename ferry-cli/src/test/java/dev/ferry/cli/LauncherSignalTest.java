package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.JavaExecutable;
import dev.ferry.cli.launch.JvmFlags;
import dev.ferry.cli.launch.TestWorkers;
import dev.ferry.cli.testworkers.Sleeper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Runs {@code ferry run} as its own JVM and signals it, as Ctrl-C, a job scheduler or the OOM killer would. */
@Timeout(60)
class LauncherSignalTest {

  @Test
  void sigtermOnTheLauncherStopsItsWorkers() throws Exception {
    Process launcher = launcher(ProcessBuilder.Redirect.DISCARD);
    try {
      List<ProcessHandle> workers = awaitReadyWorkers(launcher);

      launcher.destroy(); // SIGTERM

      assertThat(launcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(launcher.exitValue()).isEqualTo(128 + 15);
      for (ProcessHandle worker : workers) {
        assertThat(worker.onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
      }
    } finally {
      launcher.descendants().forEach(ProcessHandle::destroyForcibly);
      launcher.destroyForcibly();
    }
  }

  @Test
  void sigkillOnTheLauncherLeavesItsWorkersToTheGuardWhichStopsThem(@TempDir Path dir) throws Exception {
    Path stderr = dir.resolve("stderr.txt");
    Process launcher = launcher(ProcessBuilder.Redirect.to(stderr.toFile()));
    List<ProcessHandle> left = List.of();
    try {
      List<ProcessHandle> workers = awaitReadyWorkers(launcher);
      left = launcher.descendants().toList();

      launcher.destroyForcibly(); // SIGKILL: no shutdown hook runs

      assertThat(launcher.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(launcher.exitValue()).isEqualTo(128 + 9);
      for (ProcessHandle worker : workers) {
        assertThat(worker.onExit().get(30, TimeUnit.SECONDS).isAlive()).as("worker pid %d", worker.pid()).isFalse();
      }
      for (ProcessHandle process : left) { // the guard too, once done
        assertThat(process.onExit().get(30, TimeUnit.SECONDS).isAlive()).as("pid %d", process.pid()).isFalse();
      }
      String said = Files.readString(stderr);
      assertThat(said).contains("ferry: the launcher (pid " + launcher.pid()
          + ") is gone without stopping its workers; stopping pids [");
      workers.forEach(worker -> assertThat(said).contains(Long.toString(worker.pid())));
    } finally {
      left.forEach(ProcessHandle::destroyForcibly);
      launcher.destroyForcibly();
    }
  }

  /** {@code ferry run --nproc 2 Sleeper} as a JVM of its own, its stderr sent to {@code stderr}. */
  private static Process launcher(ProcessBuilder.Redirect stderr) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(JavaExecutable.current().toString());
    command.addAll(JvmFlags.defaults());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), FerryCli.class.getName(),
        "run", "--no-aot-cache", "--no-status", "--nproc", "2", "--classpath", TestWorkers.classpath()));
    TestWorkers.FAST_JVM.forEach(option -> command.add("--jvm-arg=" + option));
    command.add(Sleeper.class.getName());
    return new ProcessBuilder(command).redirectError(stderr).start();
  }

  /** Waits until both workers printed "ready" through the launcher, and returns them (not its guard). */
  private static List<ProcessHandle> awaitReadyWorkers(Process launcher) throws IOException {
    BufferedReader out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
    List<String> lines = new ArrayList<>();
    while (lines.size() < 2) {
      String line = out.readLine(); // bounded by @Timeout; the launcher cannot hang before this
      assertThat(line).as("launcher output ended early: %s", lines).isNotNull();
      lines.add(line);
    }
    assertThat(lines).containsExactlyInAnyOrder("[0] ready", "[1] ready");
    // A worker's command line is too long for the JDK to report (over 4 KiB), the guard's is not.
    List<ProcessHandle> workers = launcher.children()
        .filter(child -> !child.info().commandLine().orElse("").contains("OrphanGuard"))
        .toList();
    assertThat(workers).hasSize(2);
    return workers;
  }
}
