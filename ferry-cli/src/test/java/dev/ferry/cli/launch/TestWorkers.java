package dev.ferry.cli.launch;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** Spec builders for the worker mains in {@code dev.ferry.cli.testworkers}. */
public final class TestWorkers {

  /** JVM options that make the tiny test workers start fast and small on a 2-core machine. */
  public static final List<String> FAST_JVM = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx32m", "-Xss512k");

  private TestWorkers() {}

  /** The directory holding the compiled test workers: all a worker needs on its class path. */
  public static String classpath() {
    try {
      return Path.of(TestWorkers.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static WorkerGroupSpec.Builder spec(Class<?> main, int nproc, String... args) {
    return WorkerGroupSpec.builder()
        .nproc(nproc)
        .mainClass(main.getName())
        .args(Arrays.asList(args))
        .classpath(classpath())
        .jvmArgs(FAST_JVM)
        .terminationGrace(Duration.ofSeconds(3));
  }
}
