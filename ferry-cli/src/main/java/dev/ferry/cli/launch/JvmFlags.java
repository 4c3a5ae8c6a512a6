package dev.ferry.cli.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The JVM flags of the workers the launcher starts, read from {@code dev/ferry/cli/jvm.properties}:
 * the flags every Ferry JVM needs (key {@value #KEY}), then the flags of launched workers only (key
 * {@value #WORKER_KEY}).
 *
 * <p>The file is filtered at build time from the root pom properties {@code ferry.jvm.flags} and
 * {@code ferry.worker.jvm.flags}, the one place where these flags are defined; the {@code ferry}
 * script, Surefire and the launcher all read the first from there, so never hard-code a flag
 * elsewhere. The second holds production choices that the tests must not inherit (Netty's leak
 * detector off, G1 without concurrent refinement threads). The one exception depends on the machine, which a build-time property cannot
 * know: on fewer than {@value #FEW_PROCESSORS} processors the launcher's workers also get {@link
 * #forProcessors}. A worker's own {@code --jvm-arg}s come after all of these and win.
 *
 * <pre>
 * List&lt;String&gt; flags = JvmFlags.defaults();
 * // [--enable-native-access=ALL-UNNAMED, --add-opens=java.base/java.lang.invoke=ALL-UNNAMED,
 * //  -Dio.netty.jfr.enabled=false, -XX:CompileCommand=quiet, ...,
 * //  -Dio.netty.leakDetection.level=disabled, -XX:G1ConcRefinementThreads=0,
 * //  -XX:CICompilerCount=3 (2 CPUs)]
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class JvmFlags {

  /** Below this many processors HotSpot runs one C1 and one C2 compiler thread. */
  static final int FEW_PROCESSORS = 4;

  /** A second C2 thread for such machines (one C1 and two C2 threads). */
  static final String COMPILER_THREADS = "-XX:CICompilerCount=3";

  /** Class-path resource holding the flags. */
  public static final String RESOURCE = "/dev/ferry/cli/jvm.properties";

  /** Property key of the flags every Ferry JVM needs inside {@link #RESOURCE}. */
  public static final String KEY = "jvm.flags";

  /** Property key of the flags of launched workers only inside {@link #RESOURCE}. */
  public static final String WORKER_KEY = "worker.flags";

  private JvmFlags() {}

  /**
   * Returns the flags from {@link #RESOURCE} (every JVM's, then the workers'), then {@link
   * #forProcessors} for this machine.
   *
   * @throws IllegalStateException if the resource is missing or was not filtered by Maven (it
   *     still contains a {@code ${...}} placeholder), which means ferry-cli was not built with Maven
   */
  public static List<String> defaults() {
    try (InputStream in = JvmFlags.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is not on the class path; build ferry-cli with Maven");
      }
      Properties properties = new Properties();
      properties.load(in);
      List<String> flags = new ArrayList<>(parse(filtered(properties, KEY)));
      flags.addAll(parse(filtered(properties, WORKER_KEY)));
      flags.addAll(forProcessors(Runtime.getRuntime().availableProcessors()));
      return List.copyOf(flags);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
  }

  private static String filtered(Properties properties, String key) {
    String value = properties.getProperty(key, "");
    if (value.contains("${")) {
      throw new IllegalStateException(RESOURCE + " was not filtered (" + key + "=" + value
          + "); build ferry-cli with Maven so that the root pom's properties are substituted");
    }
    return value;
  }

  /**
   * The flags that depend on the number of processors. With fewer than {@value #FEW_PROCESSORS},
   * HotSpot's ergonomics start one C1 and one C2 compiler thread, and a worker's profile-driven
   * compiles (seconds of C2 work after start-up, see the AOT cache) queue behind one another while
   * the worker, waiting on the network between calls, leaves CPU idle: {@value #COMPILER_THREADS}
   * adds a second C2 thread. On the 2-vCPU VM (interleaved runs): W2's window-1 phase 9-10k -> 24-28k
   * calls/s, window 64 median 95k -> 123k (10 runs each), W1 median 27-36 -> 26-27 us with the idle
   * probe right after init unchanged (0.2-0.7 %).
   */
  static List<String> forProcessors(int processors) {
    return processors < FEW_PROCESSORS ? List.of(COMPILER_THREADS) : List.of();
  }

  /**
   * Splits a flag string on whitespace. Flags never contain spaces (quoting is not supported),
   * which keeps the property usable verbatim in the {@code ferry} shell script as well.
   */
  public static List<String> parse(String flags) {
    String trimmed = flags.strip();
    return trimmed.isEmpty() ? List.of() : List.of(trimmed.split("\\s+"));
  }
}
