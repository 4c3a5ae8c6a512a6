package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.JavaExecutable;
import dev.ferry.cli.launch.JvmFlags;
import dev.ferry.cli.launch.TestWorkers;
import dev.ferry.cli.testworkers.Sleeper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs {@code ferry run} as its own JVM and sends it SIGTERM, as Ctrl-C or a job scheduler would. */
@Timeout(60)
class LauncherSignalTest {

  @Test
  void sigtermOnTheLauncherStopsItsWorkers() throws Exception {
    List<String> command = new ArrayList<>();
    command.add(JavaExecutable.current().toString());
    command.addAll(JvmFlags.defaults());
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), FerryCli.class.getName(),
        "run", "--no-aot-cache", "--nproc", "2", "--classpath", TestWorkers.classpath()));
    TestWorkers.FAST_JVM.forEach(option -> command.add("--jvm-arg=" + option));
    command.add(Sleeper.class.getName());
    Process launcher = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      // Both workers print "ready" through the launcher, so both exist and are its children.
      BufferedReader out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
      List<String> lines = new ArrayList<>();
      while (lines.size() < 2) {
        String line = out.readLine(); // bounded by @Timeout; the launcher cannot hang before this
        assertThat(line).as("launcher output ended early: %s", lines).isNotNull();
        lines.add(line);
      }
      assertThat(lines).containsExactlyInAnyOrder("[0] ready", "[1] ready");
      List<ProcessHandle> workers = launcher.descendants().toList();
      assertThat(workers).hasSize(2);

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
}
