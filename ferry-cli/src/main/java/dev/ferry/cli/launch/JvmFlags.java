package dev.ferry.cli.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Properties;

/**
 * The JVM flags every Ferry JVM needs, read from {@code dev/ferry/cli/jvm.properties} (key
 * {@code jvm.flags}).
 *
 * <p>The file is filtered at build time from the root pom property {@code ferry.jvm.flags}, the one
 * place where these flags are defined; the {@code ferry} script, Surefire and the launcher all read
 * them from there, so never hard-code a flag elsewhere.
 *
 * <pre>
 * List&lt;String&gt; flags = JvmFlags.defaults();
 * // [--enable-native-access=ALL-UNNAMED, --add-opens=java.base/java.lang.invoke=ALL-UNNAMED]
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class JvmFlags {

  /** Class-path resource holding the flags. */
  public static final String RESOURCE = "/dev/ferry/cli/jvm.properties";

  /** Property key of the flags inside {@link #RESOURCE}. */
  public static final String KEY = "jvm.flags";

  private JvmFlags() {}

  /**
   * Returns the flags from {@link #RESOURCE}.
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
      String value = properties.getProperty(KEY, "");
      if (value.contains("${")) {
        throw new IllegalStateException(RESOURCE + " was not filtered (" + KEY + "=" + value
            + "); build ferry-cli with Maven so that the root pom's ferry.jvm.flags is substituted");
      }
      return parse(value);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
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
