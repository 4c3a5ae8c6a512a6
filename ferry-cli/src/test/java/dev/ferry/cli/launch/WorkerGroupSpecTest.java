package dev.ferry.cli.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerGroupSpecTest {

  @Test
  void defaultsComeFromThisJvmAndJvmProperties() {
    WorkerGroupSpec spec = WorkerGroupSpec.builder().mainClass("a.B").build();

    assertThat(spec.nproc()).isEqualTo(1);
    assertThat(spec.classpath()).isEqualTo(System.getProperty("java.class.path"));
    assertThat(spec.javaExecutable()).isEqualTo(JavaExecutable.current());
    assertThat(spec.jvmFlags()).isEqualTo(JvmFlags.defaults());
    assertThat(spec.masterAddr()).isEqualTo("127.0.0.1");
    assertThat(spec.masterPort()).isZero();
    assertThat(spec.stdout()).isEqualTo(OutputMode.FORWARD);
    assertThat(spec.stderr()).isEqualTo(OutputMode.FORWARD);
    assertThat(spec.pipeStdin()).isFalse();
    assertThat(spec.directory()).isEmpty();
    assertThat(spec.terminationGrace()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void commandLineIsJavaFlagsArgsClasspathMainAndArgs() {
    WorkerGroupSpec spec = WorkerGroupSpec.builder()
        .mainClass("my.app.Main$Inner")
        .args(List.of("--epochs", "3"))
        .javaExecutable(Path.of("/jdk/bin/java"))
        .jvmFlags(List.of("--flag"))
        .addJvmArg("-Xmx1g")
        .classpath("a.jar:b.jar")
        .build();

    assertThat(WorkerCommand.commandLine(spec, 0)).containsExactly(
        "/jdk/bin/java", "--flag", "-Xmx1g", "-cp", "a.jar:b.jar", "my.app.Main$Inner", "--epochs", "3");
  }

  @Test
  void processBuilderCarriesTheRankEnvironment() {
    WorkerGroupSpec spec = WorkerGroupSpec.builder().mainClass("a.B").nproc(4).masterAddr("10.0.0.1")
        .putEnv("EXTRA", "1").build();

    ProcessBuilder builder = WorkerCommand.forRank(spec, 2, 29500, "a-token-of-the-group-0123456789", null);

    assertThat(builder.environment())
        .containsEntry("RANK", "2").containsEntry("LOCAL_RANK", "2")
        .containsEntry("WORLD_SIZE", "4").containsEntry("LOCAL_WORLD_SIZE", "4")
        .containsEntry("MASTER_ADDR", "10.0.0.1").containsEntry("MASTER_PORT", "29500")
        .containsEntry("EXTRA", "1")
        .containsEntry("FERRY_AUTH_TOKEN", "a-token-of-the-group-0123456789");
    assertThat(builder.environment().get("FERRY_APPLICATION_PACKAGES")).as("the main class's package, declared callable")
        .matches("(.*,)?a");
  }

  @Test
  void theApplicationsPackageIsTheMainClasssAddedToWhatTheVariableSays() {
    assertThat(WorkerEnvironment.applicationPackages("com.example.train.Main", null)).isEqualTo("com.example.train");
    assertThat(WorkerEnvironment.applicationPackages("Ops", null)).as("the unnamed package").isEqualTo(".");
    assertThat(WorkerEnvironment.applicationPackages("a.b.Outer$Main", " ")).isEqualTo("a.b");
    assertThat(WorkerEnvironment.applicationPackages("a.b.Main", "org.lib")).isEqualTo("org.lib,a.b");
    assertThat(WorkerEnvironment.applicationPackages("a.b.Main", "a.b, org.lib")).isEqualTo("a.b, org.lib");
  }

  @Test
  void newAuthTokensAreLongRandomAndUrlSafe() {
    String one = WorkerEnvironment.newAuthToken();
    String other = WorkerEnvironment.newAuthToken();

    assertThat(one).hasSize(43).matches("[A-Za-z0-9_-]+").isNotEqualTo(other);
  }

  @Test
  void toBuilderKeepsEveryValue() {
    WorkerGroupSpec spec = WorkerGroupSpec.builder().mainClass("a.B").nproc(3).masterPort(1234)
        .addJvmArg("-Xmx1g").putEnv("K", "V").pipeStdin(true).stdout(OutputMode.PIPE).build();

    WorkerGroupSpec copy = spec.toBuilder().nproc(5).build();

    assertThat(copy.nproc()).isEqualTo(5);
    assertThat(copy.masterPort()).isEqualTo(1234);
    assertThat(copy.jvmArgs()).containsExactly("-Xmx1g");
    assertThat(copy.env()).containsEntry("K", "V");
    assertThat(copy.pipeStdin()).isTrue();
    assertThat(copy.stdout()).isEqualTo(OutputMode.PIPE);
    assertThat(spec.nproc()).isEqualTo(3);
  }

  @Test
  void rejectsInvalidValuesWithClearMessages() {
    WorkerGroupSpec.Builder b = WorkerGroupSpec.builder();
    assertThatThrownBy(() -> b.nproc(0)).hasMessage("nproc must be at least 1, got 0");
    assertThatThrownBy(() -> b.mainClass("my/app/Main")).hasMessageContaining("'my/app/Main' is not a Java class name");
    assertThatThrownBy(() -> b.putEnv("RANK", "0")).hasMessageContaining("RANK is set by the launcher");
    assertThatThrownBy(() -> b.masterPort(70000)).hasMessageContaining("masterPort must be in 1..65535");
    assertThatThrownBy(() -> b.terminationGrace(Duration.ofSeconds(-1))).hasMessageContaining("must not be negative");
    assertThatThrownBy(b::build).isInstanceOf(IllegalStateException.class).hasMessage("mainClass is required");
  }
}
