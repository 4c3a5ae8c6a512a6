package dev.ferry.cli.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Assembles one AOT cache in a process of its own, so that the launcher that recorded the
 * training exits at once instead of waiting the seconds the JVM takes to write the cache (see
 * {@link AotCache#finishTraining}). The launcher starts it and does not wait for it.
 *
 * <p>It runs the assembling JVM ({@code -XX:AOTMode=create}), which writes the cache under a
 * temporary name ({@code <cache>.partial}); only when that JVM has exited successfully is the
 * file renamed, atomically, to the name later runs look for. So a run never starts from a
 * half-written cache: until the rename it finds none and starts cold. The training marker stays
 * until this process is done, so no other launcher records or assembles the same cache meanwhile
 * (a marker older than {@link AotCache}'s staleness limit is reclaimed, should this process die).
 *
 * <p>What it prints (its own lines and the assembling JVM's) goes to {@code <cache>.log}, which is
 * deleted when the cache is saved and kept, to say why, when it is not.
 *
 * <pre>
 * java -cp ferry-cli.jar dev.ferry.cli.launch.AotCacheSaver CACHE CONFIG MARKER -- JAVA FLAGS… -XX:AOTMode=create …
 * </pre>
 */
final class AotCacheSaver {
  /** The longest an assembly may take; then it is stopped and the next run records again. */
  static final Duration CREATE_TIMEOUT = Duration.ofMinutes(5);
  private static final String SEPARATOR = "--";

  private AotCacheSaver() {}

  /** The command that saves {@code cache} from {@code config} with {@code create}, then releases {@code marker}. */
  static List<String> command(Path cache, Path config, Path marker, List<String> create) {
    List<String> command = new ArrayList<>(List.of(JavaExecutable.current().toString(),
        // A short-lived process that only waits and renames: no JIT compiler threads worth starting.
        "-XX:TieredStopAtLevel=1", "-Xmx32m",
        "-cp", System.getProperty("java.class.path"), AotCacheSaver.class.getName(),
        cache.toString(), config.toString(), marker.toString(), SEPARATOR));
    command.addAll(create);
    return command;
  }

  /** The JVM flag that names the file the assembling JVM writes, for a cache that becomes {@code cache}. */
  static String outputFlag(Path cache) {
    return "-XX:AOTCache=" + partial(cache);
  }

  /** The log kept beside {@code cache} while it is saved, and after a failure. */
  static Path logFile(Path cache) {
    return cache.resolveSibling(cache.getFileName() + ".log");
  }

  private static Path partial(Path cache) {
    return cache.resolveSibling(cache.getFileName() + ".partial");
  }

  public static void main(String[] args) throws InterruptedException {
    int separator = Arrays.asList(args).indexOf(SEPARATOR);
    if (separator != 3 || args.length == separator + 1) {
      System.err.println("usage: AotCacheSaver CACHE CONFIG MARKER -- CREATE-COMMAND…");
      System.exit(2);
    }
    Path cache = Path.of(args[0]);
    Path config = Path.of(args[1]);
    Path marker = Path.of(args[2]);
    List<String> create = List.of(args).subList(separator + 1, args.length);
    boolean saved = false;
    try {
      saved = save(cache, create);
    } finally {
      deleteQuietly(partial(cache));
      deleteQuietly(config);
      deleteQuietly(marker);
    }
    if (saved) {
      deleteQuietly(logFile(cache));
    }
    System.exit(saved ? 0 : 1);
  }

  private static boolean save(Path cache, List<String> create) throws InterruptedException {
    Path partial = partial(cache);
    long start = System.nanoTime();
    try {
      Process process = new ProcessBuilder(create).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
      if (!process.waitFor(CREATE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        System.out.println("AOT cache assembly took longer than " + CREATE_TIMEOUT + "; stopped, the next run records again");
        return false;
      }
      if (process.exitValue() != 0 || !Files.isRegularFile(partial)) {
        System.out.println("AOT cache assembly failed (exit " + process.exitValue() + "); the next run records again");
        return false;
      }
      Files.move(partial, cache, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      System.out.println("AOT cache saved: " + (Files.size(cache) >> 20) + " MiB in "
          + Elapsed.format(Elapsed.since(start, System.nanoTime())));
      AotCache.in(cache.getParent()).prune(cache);
      return true;
    } catch (IOException e) {
      System.out.println("cannot save the AOT cache " + cache + ": " + e);
      return false;
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      System.out.println("cannot delete " + path + ": " + e);
    }
  }
}
