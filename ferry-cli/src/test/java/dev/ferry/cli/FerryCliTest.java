package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.TestWorkers;
import dev.ferry.cli.testworkers.EnvEcho;
import dev.ferry.cli.testworkers.FailFirstAttempt;
import dev.ferry.cli.testworkers.FailOnceAlone;
import dev.ferry.cli.testworkers.FailOnRank;
import dev.ferry.cli.testworkers.InheritedMain;
import dev.ferry.cli.testworkers.NoMain;
import dev.ferry.cli.testworkers.Sleeper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Runs the CLI in this JVM (worker JVMs are real) and checks its output and exit codes. */
@Timeout(60)
class FerryCliTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int ferry(String... args) {
    return FerryCli.execute(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  /** {@code ferry run} with the test workers' class path and fast JVM options, then {@code args}. */
  private int run(String... args) {
    List<String> all = new ArrayList<>(List.of("run", "--no-aot-cache", "--classpath", TestWorkers.classpath()));
    TestWorkers.FAST_JVM.forEach(option -> all.add("--jvm-arg=" + option));
    all.addAll(Arrays.asList(args));
    return ferry(all.toArray(String[]::new));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @AfterEach
  void noWorkerOutlivesTheLauncher() {
    assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
        .as("processes left behind by ferry run").isEmpty();
  }

  @Test
  void runStartsEveryRankAndPrefixesItsOutput() {
    int code = run("--nproc", "2", "--master-port", "29517", "--jvm-arg", "-Dferry.test.prop=cli",
        EnvEcho.class.getName(), "x", "--y");

    assertThat(code).as(err()).isZero();
    assertThat(out().lines().toList()).contains(
        "[0] RANK=0", "[0] WORLD_SIZE=2", "[0] MASTER_PORT=29517",
        "[0] prop=cli", "[0] args=[x, --y]",
        "[1] RANK=1", "[1] LOCAL_RANK=1", "[1] MASTER_ADDR=127.0.0.1", "[1] args=[x, --y]");
    assertThat(err()).contains("[0] stderr of rank 0", "[1] stderr of rank 1",
        "ferry run: all 2 workers exited with code 0");
  }

  @Test
  void runServesAStatusPageByDefaultAndTellsEachWorkerWhereToReport() {
    assertThat(run("--nproc", "2", EnvEcho.class.getName())).as(err()).isZero();

    java.util.regex.Matcher page = java.util.regex.Pattern
        .compile("ferry run: status page at (http://127\\.0\\.0\\.1:\\d+/)").matcher(err());
    assertThat(page.find()).as(err()).isTrue();
    assertThat(out().lines().toList()).contains("[0] FERRY_STATUS_URL=" + page.group(1) + "api/report/0",
        "[1] FERRY_STATUS_URL=" + page.group(1) + "api/report/1");
  }

  @Test
  void noStatusServesNoPage() {
    assertThat(run("--no-status", EnvEcho.class.getName())).isZero();
    assertThat(err()).doesNotContain("status page");
    assertThat(out().lines().toList()).contains("[0] FERRY_STATUS_URL=null");
  }

  @Test
  void noPrefixForwardsOutputVerbatim() {
    assertThat(run("--no-prefix", EnvEcho.class.getName())).isZero();

    assertThat(out().lines().toList()).contains("RANK=0", "WORLD_SIZE=1").noneMatch(l -> l.startsWith("["));
  }

  @Test
  void optionsAfterTheMainClassBelongToTheWorker() {
    assertThat(run(EnvEcho.class.getName(), "--nproc", "5")).isZero();

    assertThat(out()).contains("[0] WORLD_SIZE=1", "[0] args=[--nproc, 5]");
  }

  @Test
  void aFailingRankStopsTheGroupAndSetsTheExitCode() {
    int code = run("--nproc", "3", FailOnRank.class.getName(), "1", "3");

    assertThat(code).isEqualTo(3);
    assertThat(err()).contains("ferry run: rank 1 (pid ", ") failed with exit code 3 after ",
        "; stopped ranks 0, 2", "[1] rank 1 failing on purpose");
  }

  @Test
  void timeoutStopsEverythingAndSaysSo() {
    int code = run("--nproc", "2", "--timeout", "1s", Sleeper.class.getName());

    assertThat(code).isEqualTo(RunCommand.EXIT_TIMEOUT);
    assertThat(err()).contains("ferry run: timed out after ", "stopped ranks 0, 1");
  }

  @Test
  void rejectsBadArgumentsWithClearMessages() {
    assertThat(ferry("run", "--nproc", "0", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--nproc must be at least 1, but was 0");

    assertThat(ferry("run", "--nproc", "2")).isEqualTo(2);
    assertThat(err()).contains("Missing required parameter: 'MAIN_CLASS'");

    assertThat(ferry("run", "my/app/Main")).isEqualTo(2);
    assertThat(err()).contains("'my/app/Main' is not a Java class name");

    assertThat(ferry("run", "--timeout", "10", "a.B")).isEqualTo(2);
    assertThat(err()).contains("'10' is not a duration");

    assertThat(ferry("run", "--master-port", "0", "a.B")).isEqualTo(2);
    assertThat(ferry("run", "--status-port", "70000", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--master-port must be in 1..65535");

    assertThat(ferry("run", "--nprocs", "2", "a.B")).isEqualTo(2);
    assertThat(err()).contains("Unknown option: '--nprocs'");

    assertThat(ferry()).isEqualTo(2);
    assertThat(err()).contains("Missing command");
  }

  @Test
  void aBadCommandLineIsOneLineThatSaysWhatIsWrongAndWhereToReadMoreNotTheWholeHelp() {
    assertThat(ferry("run", "--nprocs", "2", "a.B")).isEqualTo(2);
    assertThat(err().lines().toList()).first().isEqualTo("ferry run: Unknown option: '--nprocs'");
    assertThat(err()).contains("--nproc", "See 'ferry run --help' for its options.").doesNotContain("--grace-period");
    assertThat(err().lines().count()).isLessThan(6);
    assertThat(out()).isEmpty();

    err.reset();
    assertThat(ferry("run", "-jar", "no-such.jar")).isEqualTo(2);
    assertThat(err().lines().toList()).containsExactly("ferry run: -jar no-such.jar: no such file",
        "See 'ferry run --help' for its options.");

    err.reset();
    assertThat(ferry("jfr")).isEqualTo(2); // a command of commands shows them: they are what to type
    assertThat(err()).startsWith("ferry jfr: Missing command: use 'summary'").contains("Commands:", "summary");
  }

  @Test
  void maxRestartsOnOneNodeRestartsTheGroup() {
    int code = run("--nproc", "2", "--max-restarts", "1", FailFirstAttempt.class.getName(), "1", "5");
    assertThat(code).as(err()).isZero();
    assertThat(err()).contains("failed with exit code 5", "restarting the world (restart 1 of 1)");
    assertThat(out()).contains("[0] attempt 1 rank 0 of 2", "[1] attempt 1 rank 1 of 2");
  }

  @Test
  void workerRestartsStartAFailedWorkerAgainAloneWhileTheOthersRunOn(@TempDir Path dir) {
    int code = run("--nproc", "2", "--worker-restarts", "1", FailOnceAlone.class.getName(), dir.toString());
    assertThat(code).as(err() + out()).isZero();
    assertThat(out()).contains("[1] rank 1 started again", "[0] rank 0 ran once, through rank 1's restart");

    assertThat(ferry("run", "--worker-restarts", "1", "--max-restarts", "1", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--worker-restarts restarts one worker on one node");
    assertThat(ferry("run", "--worker-restarts", "-1", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--worker-restarts must not be negative");
  }

  @Test
  void rejectsBadMultiNodeArgumentsWithClearMessages() {
    assertThat(ferry("run", "--nnodes", "2", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--nnodes 2 needs --rdzv-endpoint HOST:PORT");

    assertThat(ferry("run", "--nnodes", "2:x", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--nnodes must be N or MIN:MAX, got '2:x'");

    assertThat(ferry("run", "--nnodes", "1:2", "--rdzv-endpoint", "127.0.0.1:29400", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--rdzv-backend static needs a fixed --nnodes N, not 1:2");

    assertThat(ferry("run", "--rdzv-backend", "consul", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--rdzv-backend must be static, etcd or zookeeper, got 'consul'");

    assertThat(ferry("run", "--rdzv-id", "no spaces", "--max-restarts", "1", "a.B")).isEqualTo(2);
    assertThat(err()).contains("--rdzv-id must be 1-64 letters");

    if (System.getenv("FERRY_AUTH_TOKEN") == null) {
      assertThat(ferry("run", "--nnodes", "2", "--rdzv-endpoint", "127.0.0.1:29400", "a.B")).isEqualTo(2);
      assertThat(err()).contains("a job on more than one node needs the same FERRY_AUTH_TOKEN on every node");
    }
  }

  @Test
  void aMainClassMissingFromTheGivenClassPathIsReportedBeforeStarting() {
    int code = run("--nproc", "2", "does.not.Exist");

    assertThat(code).isEqualTo(1);
    assertThat(err()).contains("ferry run: main class does.not.Exist is not on the workers' class path (--classpath ");
    assertThat(out()).isEmpty();
  }

  @Test
  void aMainClassWithoutAMainMethodIsReportedOnceBeforeStarting() {
    int code = run("--nproc", "2", NoMain.class.getName());

    assertThat(code).isEqualTo(1);
    assertThat(err()).isEqualTo("ferry run: main class " + NoMain.class.getName() + " has no main method, so every "
        + "worker would fail to start it; declare public static void main(String[] args) (or, since JDK 25, a "
        + "non-private void main())" + System.lineSeparator());
    assertThat(out()).isEmpty();
  }

  @Test
  void aMainMethodTheJdkTakesThoughItIsNotPublicStaticStartsTheWorkers() {
    int code = run("--nproc", "1", InheritedMain.class.getName()); // an instance main() of its superclass

    assertThat(code).as(err()).isZero();
    assertThat(out()).contains("[0] instance main of rank 0");
  }

  @Test
  void aMissingMainClassNamesTheLikelySlipADirectoryOfJarsOrAClassFileName(@TempDir Path dir) throws IOException {
    Path deps = Files.createDirectories(dir.resolve("deps"));
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(deps.resolve("app.jar")), new Manifest())) {
      jar.putNextEntry(new java.util.jar.JarEntry("my/app/Main.class"));
      jar.closeEntry();
    }

    assertThat(ferry("run", "--no-aot-cache", "-cp", deps.toString(), "my.app.Main.class")).isEqualTo(1);

    assertThat(err()).contains("ferry run: main class my.app.Main.class is not on the workers' class path (--classpath "
        + deps + "); " + deps + " holds jars, which java reads only as " + deps.resolve("*")
        + "; a main class is named without .class: my.app.Main");
    assertThat(out()).isEmpty();
  }

  @Test
  void aMainClassMissingFromTheLaunchersClassPathIsReportedBeforeStarting() {
    assertThat(ferry("run", "--nproc", "2", "does.not.Exist")).isEqualTo(1);

    assertThat(err()).contains("ferry run: main class does.not.Exist is not on the workers' class path (the launcher's");
    assertThat(out()).isEmpty();
  }

  @Test
  void jarRunsItsManifestsMainClassAndGivesEverythingAfterItToTheWorkers(@TempDir Path dir) throws IOException {
    Path jar = dir.resolve("app.jar");
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, EnvEcho.class.getName());
    // The classes live beside the jar, as a deps/ directory would: found through Class-Path.
    manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, Path.of(TestWorkers.classpath()).toUri().toString());
    new JarOutputStream(Files.newOutputStream(jar), manifest).close();

    List<String> all = new ArrayList<>(List.of("run", "--no-aot-cache", "--nproc", "2"));
    TestWorkers.FAST_JVM.forEach(option -> all.add("--jvm-arg=" + option));
    all.addAll(List.of("-jar", jar.toString(), "--nproc", "5", "x"));
    assertThat(ferry(all.toArray(String[]::new))).as(err()).isZero();

    assertThat(out().lines().toList()).contains("[0] WORLD_SIZE=2", "[1] args=[--nproc, 5, x]");
  }

  @Test
  void jarWithoutAMainClassOrBesideAClassPathIsABadCommandLine(@TempDir Path dir) throws IOException {
    Path jar = dir.resolve("lib.jar");
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    new JarOutputStream(Files.newOutputStream(jar), manifest).close();

    assertThat(ferry("run", "-jar", jar.toString())).isEqualTo(2);
    assertThat(err()).contains("its manifest names no Main-Class");
    assertThat(ferry("run", "-cp", "x", "-jar", jar.toString())).isEqualTo(2);
    assertThat(err()).contains("-jar and --classpath exclude each other");
    assertThat(ferry("run", "-jar", dir.resolve("missing.jar").toString())).isEqualTo(2);
    assertThat(err()).contains("missing.jar: no such file");
  }

  @Test
  void helpAndVersion() {
    assertThat(ferry("--version")).isZero();
    assertThat(out()).contains("ferry 0.1.0-SNAPSHOT", "JVM: ");

    assertThat(ferry("--help")).isZero();
    assertThat(out()).contains("run", "bench");

    assertThat(ferry("run", "--help")).isZero();
    assertThat(out()).contains("--nproc=N", "RANK", "MASTER_PORT", "124");
  }

  @Test
  void benchWithoutTheHarnessOnTheClassPathSaysSo() {
    assertThat(ferry("bench", "--quick")).isEqualTo(1);
    assertThat(err()).contains("ferry bench: dev.ferry.bench.BenchMain is not on the class path; build ferry-bench");
  }

  @Test
  void benchPassesEveryArgumentThrough() {
    CommandLine bench = new CommandLine(new BenchCommand(FakeBench.class.getName(), System.err))
        .setUnmatchedOptionsArePositionalParams(true);

    assertThat(bench.execute("--help", "--size", "4", "x")).isZero();
    assertThat(FakeBench.lastArgs).containsExactly("--help", "--size", "4", "x");

    bench.setErr(new java.io.PrintWriter(new PrintStream(err, true, StandardCharsets.UTF_8), true));
    assertThat(bench.execute("--explode")).isEqualTo(1);
    assertThat(err()).contains("bench exploded");
  }

  @Test
  void durationsAcceptUnitsAndIso() {
    assertThat(DurationConverter.parse("500ms")).hasMillis(500);
    assertThat(DurationConverter.parse("1m30s")).hasSeconds(90);
    assertThat(DurationConverter.parse("2h")).hasHours(2);
    assertThat(DurationConverter.parse("PT90S")).hasSeconds(90);
  }
}
