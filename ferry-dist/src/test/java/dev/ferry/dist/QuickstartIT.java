package dev.ferry.dist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.etcd.EtcdServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's path, end to end: the standalone project {@code examples/quickstart} is built with
 * Maven against the artifacts this build just made (as a user's project would be after
 * {@code ./ferry build}), and runs through the binary distribution's {@code bin/ferry}, unpacked
 * elsewhere and started from yet another directory.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class QuickstartIT {

  private static final String VERSION = System.getProperty("ferry.version");

  @TempDir static Path work;
  private static Path ferry;
  private static Path quickstart;
  private static Path elsewhere;

  @BeforeAll
  static void buildTheQuickstartAndUnpackTheDistribution() throws Exception {
    quickstart = copy(Path.of(System.getProperty("ferry.quickstart")), work.resolve("quickstart"));
    Path settings = work.resolve("settings.xml");
    Files.writeString(settings, settingsWithOnlyLocalRepositories());
    Result build = run(quickstart, List.of(mavenExecutable().toString(), "-B", "-ntp", "-Dstyle.color=never",
        "-s", settings.toString(), "-Dferry.version=" + VERSION, "package"));
    assertThat(build.code()).as("mvn package of examples/quickstart:%n%s", build.output()).isZero();

    Path unpacked = Files.createDirectories(work.resolve("dist"));
    Result untar = run(unpacked, List.of("tar", "xzf", System.getProperty("ferry.dist.archive")));
    assertThat(untar.code()).as(untar.output()).isZero();
    ferry = unpacked.resolve("ferry-" + VERSION).resolve("bin").resolve("ferry");
    elsewhere = Files.createDirectories(work.resolve("elsewhere"));
  }

  @Test
  void theDistributionRunsTheQuickstartJar() throws Exception {
    Result result = ferry("run", "--nproc", "2", "--no-aot-cache", "-jar",
        quickstart.resolve("target/ferry-quickstart.jar").toString());

    assertThat(result.code()).as(result.output()).isZero();
    assertThat(result.output()).contains("[0] 7 11 2", "ferry run: all 2 workers exited with code 0");
  }

  @Test
  void theDistributionRunsTheQuickstartFromAClassPathWithItsDependencies() throws Exception {
    Path target = quickstart.resolve("target");
    Result result = ferry("run", "--nproc", "2", "--no-aot-cache",
        "-cp", target.resolve("ferry-quickstart.jar") + ":" + target.resolve("deps") + "/*", "com.example.Ops");

    assertThat(result.code()).as(result.output()).isZero();
    assertThat(result.output()).contains("[0] 7 11 2");
  }

  @Test
  void aProgramWithoutFerryOnItsClassPathGetsTheDistributionsLibraries() throws Exception {
    Result result = ferry("run", "--nproc", "2", "--no-aot-cache",
        "-cp", quickstart.resolve("target/classes").toString(), "com.example.Ops");

    assertThat(result.code()).as(result.output()).isZero();
    assertThat(result.output()).contains("[0] 7 11 2");
  }

  /**
   * A program of its own on the module path, with the quick start's dependencies (Ferry's from the
   * BOM) as the module path and the flags README gives: it calls, is called, gets remote errors, and
   * cannot reach Ferry's internal packages, neither when it is compiled nor by reflection.
   */
  @Test
  void aProgramOnTheModulePathWorksAndCannotReachFerrysInternals() throws Exception {
    Path deps = quickstart.resolve("target/deps");
    Path classes = work.resolve("modular-classes");
    Result compiled = javac(deps, classes, Path.of(System.getProperty("ferry.modular")));
    assertThat(compiled.code()).as(compiled.output()).isZero();

    Result peek = javac(deps, work.resolve("peek-classes"), Path.of(System.getProperty("ferry.modular.internal")));
    assertThat(peek.code()).as(peek.output()).isNotZero();
    assertThat(peek.output()).contains("package dev.ferry.rpc.internal.agent is not visible",
        "(package dev.ferry.rpc.internal.agent is declared in module dev.ferry.rpc, which does not export it)");

    Result run = run(elsewhere, List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--module-path", deps + ":" + classes,
        "--add-modules", "io.netty.transport.epoll.linux.x86_64",
        "--enable-native-access=dev.ferry.rpc,io.netty.common",
        "--add-opens=java.base/java.lang.invoke=org.apache.fory.core",
        "-m", "com.example.modular/com.example.modular.Main"));
    assertThat(run.code()).as(run.output()).isZero();
    assertThat(run.output()).as(run.output()).contains(
        "calls: Point[x=11, y=12] 6 3 worker1 netty-epoll",
        "error: REMOTE_ERROR java.lang.IllegalStateException boom",
        "module: dev.ferry.rpc exports dev.ferry.rpc.internal.agent: false",
        "internal: class com.example.modular.Main (in module com.example.modular) cannot access class"
            + " dev.ferry.rpc.internal.serial.FunctionRef (in module dev.ferry.rpc) because module dev.ferry.rpc"
            + " does not export dev.ferry.rpc.internal.serial to module com.example.modular")
        .doesNotContain("WARNING"); // README's flags leave the JVM nothing to warn about
  }

  /** Compiles the module whose sources are under {@code sources} against {@code modulePath}. */
  private static Result javac(Path modulePath, Path classes, Path sources) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
        "--module-path", modulePath.toString(), "-d", classes.toString()));
    try (Stream<Path> files = Files.walk(sources)) {
      files.filter(file -> file.toString().endsWith(".java")).forEach(file -> command.add(file.toString()));
    }
    return run(elsewhere, command);
  }

  @Test
  void aJobMeetingThroughEtcdStartsWithoutWarningsFromTheLaunchersJvm() throws Exception {
    try (EtcdServer etcd = EtcdServer.start()) {
      Result result = ferry("run", "--nproc", "2", "--no-aot-cache", "--rdzv-backend", "etcd",
          "--rdzv-endpoint", etcd.endpoint(), "--rdzv-id", "quickstart-etcd",
          "-jar", quickstart.resolve("target/ferry-quickstart.jar").toString());

      assertThat(result.code()).as(result.output()).isZero();
      assertThat(result.output()).contains("[0] 7 11 2", "ferry run: all 2 workers on 1 node exited with code 0");
      // gRPC's Netty and protobuf in the launcher: no JDK warnings, no java.util.logging INFO lines
      assertThat(result.output()).as(result.output()).doesNotContain("WARNING", "INFO: ");
    }
  }

  @Test
  void helpAndVersionAnswerAndExitZero() throws Exception {
    Result version = ferry("--version");
    assertThat(version.code()).as(version.output()).isZero();
    assertThat(version.output()).contains("ferry " + VERSION);

    Result help = ferry("--help");
    assertThat(help.code()).as(help.output()).isZero();
    assertThat(help.output()).contains("run", "bench");

    Result runHelp = ferry("run", "--help");
    assertThat(runHelp.code()).as(runHelp.output()).isZero();
    assertThat(runHelp.output()).contains("--nproc=N", "-jar=JAR", "--classpath=CP");
  }

  /** A {@code lib/} that lost the launcher's jar is named as the problem, not left to java's class loader. */
  @Test
  void aDistributionWithoutTheLaunchersJarSaysSo() throws Exception {
    Path partial = work.resolve("partial");
    Path bin = Files.createDirectories(partial.resolve("bin"));
    Path lib = Files.createDirectories(partial.resolve("lib"));
    Files.copy(ferry, bin.resolve("ferry"), StandardCopyOption.COPY_ATTRIBUTES);
    try (Stream<Path> jars = Files.list(ferry.getParent().resolveSibling("lib"))) {
      for (Path jar : jars.filter(jar -> !jar.getFileName().toString().startsWith("ferry-cli-")).toList()) {
        Files.copy(jar, lib.resolve(jar.getFileName()));
      }
    }

    Result result = run(elsewhere, List.of(bin.resolve("ferry").toString(), "--version"));

    assertThat(result.code()).as(result.output()).isEqualTo(1);
    assertThat(result.output()).as(result.output())
        .contains("ferry: " + lib + " has no ferry-cli jar, so this is not a whole Ferry distribution")
        .doesNotContain("ClassNotFoundException", "Could not find or load main class");
  }

  private static Result ferry(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(ferry.toString()));
    command.addAll(List.of(args));
    return run(elsewhere, command);
  }

  /** Every artifact from the test's repository or, for Maven's plugins, the build's own: no network. */
  private static String settingsWithOnlyLocalRepositories() {
    return """
        <settings>
          <localRepository>%s</localRepository>
          <mirrors>
            <mirror>
              <id>the-builds-local-repository</id>
              <mirrorOf>*</mirrorOf>
              <url>%s</url>
            </mirror>
          </mirrors>
        </settings>
        """.formatted(System.getProperty("ferry.it.repository"),
        Path.of(System.getProperty("ferry.user.repository")).toUri());
  }

  private static Path mavenExecutable() {
    return Path.of(System.getProperty("maven.home"), "bin", "mvn");
  }

  private record Result(int code, String output) {}

  private static Result run(Path directory, List<String> command) throws IOException, InterruptedException {
    Path log = Files.createTempFile(work, "output", ".log");
    ProcessBuilder builder = new ProcessBuilder(command).directory(directory.toFile())
        .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(devNull()));
    Map<String, String> env = builder.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.remove("MAVEN_OPTS"); // the outer build's (its local repository among them) are not the quick start's
    env.remove("FERRY_AUTH_TOKEN");
    Process process = builder.start();
    if (!process.waitFor(3, TimeUnit.MINUTES)) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor();
      return new Result(-1, "timed out after 3 minutes: " + command + "\n" + Files.readString(log));
    }
    return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  private static java.io.File devNull() {
    return new java.io.File("/dev/null");
  }

  private static Path copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      files.filter(file -> !from.relativize(file).startsWith("target")).forEach(file -> {
        try {
          Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
    return to;
  }
}
