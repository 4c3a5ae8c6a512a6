package dev.ferry.cli.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.testworkers.Sleeper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The guard with real processes. Its input ends the same way whether the launcher closed it or died,
 * so closing it here while a worker runs is what a killed launcher does ({@code LauncherSignalTest}
 * kills a real one).
 */
@Timeout(60)
class OrphanGuardTest {

  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void noneLeft() {
    started.forEach(Process::destroyForcibly);
  }

  @Test
  void aWorkerThatIgnoresSigtermIsKilledAfterTheGracePeriod() throws Exception {
    Process worker = ready(sleeper("--ignore-sigterm"));
    OrphanGuard guard = OrphanGuard.start(Duration.ofMillis(500));
    started.add(guard.process());
    guard.watch(worker);

    guard.close();

    assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(worker.exitValue()).as("SIGKILL").isEqualTo(128 + 9);
    assertThat(guard.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(guard.process().exitValue()).isZero();
  }

  @Test
  void workersThatExitedAreLeftAloneAndTheGuardEndsWithItsInput() throws Exception {
    Process worker = ready(sleeper());
    OrphanGuard guard = OrphanGuard.start(Duration.ofSeconds(3));
    started.add(guard.process());
    guard.watch(worker);
    worker.destroy();
    assertThat(worker.waitFor(30, TimeUnit.SECONDS)).isTrue();

    guard.close();

    assertThat(guard.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(guard.process().exitValue()).isZero();
  }

  private Process sleeper(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(JavaExecutable.current().toString()));
    command.addAll(TestWorkers.FAST_JVM);
    command.addAll(List.of("-cp", TestWorkers.classpath(), Sleeper.class.getName()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    started.add(process);
    return process;
  }

  /** Waits for its "ready": a SIGTERM before its shutdown hook is in would end it at once. */
  private static Process ready(Process sleeper) throws IOException {
    String line = new BufferedReader(new InputStreamReader(sleeper.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(line).isEqualTo("ready");
    return sleeper;
  }
}
