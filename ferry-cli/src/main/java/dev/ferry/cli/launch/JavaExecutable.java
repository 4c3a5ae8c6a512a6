package dev.ferry.cli.launch;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Locates the {@code java} binary of the running JVM, so that workers run on exactly the JDK the
 * launcher runs on (the {@code ferry} script has already checked that it is 25 or newer).
 *
 * <pre>
 * Path java = JavaExecutable.current(); // e.g. /usr/lib/jvm/temurin-25-jdk-amd64/bin/java
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class JavaExecutable {

  private JavaExecutable() {}

  /**
   * Returns {@code ${java.home}/bin/java}, or, if that is not executable (an unusual custom
   * runtime image), the command line binary of this process.
   *
   * @throws IllegalStateException if neither can be found
   */
  public static Path current() {
    boolean windows = System.getProperty("os.name", "").toLowerCase().startsWith("windows");
    Path fromHome = Path.of(System.getProperty("java.home"), "bin", windows ? "java.exe" : "java");
    if (Files.isExecutable(fromHome)) {
      return fromHome;
    }
    return ProcessHandle.current().info().command().map(Path::of)
        .orElseThrow(() -> new IllegalStateException(
            "cannot find the java binary: " + fromHome + " is not executable and the OS does not "
                + "report this process's command"));
  }
}
