package dev.ferry.cli.launch;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * Workers start warm from the second run on: the JDK's ahead-of-time cache (JDK 25+, JEPs 483 and
 * 515) holds the classes a worker loaded and linked and the profiles its hot methods had, so the
 * next JVM skips class loading and compiles the hot code at once instead of after thousands of
 * slow calls. On a small machine that is most of a short job's time: the compiler threads of two
 * JVMs take a core for seconds, right when the job's calls run.
 *
 * <h2>How</h2>
 * A cache is kept per <em>role</em> (rank 0, which usually drives the job, and the other ranks)
 * and per job: its key hashes the {@code java} binary and version, the JVM flags, the class path
 * (each entry's size and time, so a rebuild trains anew), the main class and the workers' Ferry
 * settings ({@code FERRY_*} variables, which choose transports and so the code that runs hot). A run that finds no
 * cache for a role records one: its rank 0 (or rank 1) runs with {@code -XX:AOTMode=record}; once
 * the group has succeeded, {@link #finishTraining} has the cache assembled ({@code -XX:AOTMode=create},
 * a few seconds) by a process it does not wait for ({@link AotCacheSaver}), which renames the
 * finished file into place; runs that start after that start with {@code -XX:AOTCache}. A marker
 * file, held until the cache is saved, keeps two launchers from recording or saving the same role
 * at once. A cache the JVM finds stale is
 * ignored by it (the run is just not faster). On JDKs before 25, or with a class path that has
 * directories of classes (the JVM archives only jars), nothing happens.
 *
 * <pre>
 * AotCache cache = AotCache.in(Path.of(System.getProperty("user.home"), ".cache", "ferry", "aot"));
 * List&lt;String&gt; flags = cache.flagsFor(spec, rank);   // -XX:AOTCache=… or -XX:AOTMode=record …
 * …                                                  // run the group
 * cache.finishTraining(spec);                        // after a successful run
 * </pre>
 *
 * <p>This class is thread-safe.
 */
public final class AotCache {
  private static final Logger log = LoggerFactory.getLogger(AotCache.class);
  /** The first JDK whose cache holds method profiles and whose flags this class uses. */
  public static final int MIN_FEATURE = 25;
  /** A training marker older than this was left by a launcher that died: it no longer counts. */
  private static final Duration STALE_MARKER = Duration.ofMinutes(30);
  private static final String NULL_DEVICE =
      System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("windows") ? "NUL" : "/dev/null";
  /**
   * Caches kept per main class and role, the most recently used first (a cache is ~40 MiB and each
   * rebuild of a program trains a new one; a few cover checkouts or JDKs used in turn).
   */
  static final int KEEP_PER_PROGRAM = 4;
  private static final String CACHE_DIR_VARIABLE = "FERRY_AOT_CACHE";
  private static final String EAGER_VARIABLE = "FERRY_EAGER_JIT";
  /**
   * The JVM warns about every class it cannot archive (generated ones, say) and about a cache it
   * finds stale; neither is the user's business: the worker just starts less warm.
   */
  private static final String QUIET = "-Xlog:aot*=off,cds*=off";
  /** What a recording JVM prints on its stdout as it exits, whatever -Xlog says (JDK 25). */
  private static final String RECORDED_REPORT = "AOTConfiguration recorded: ";

  /**
   * The JDK whose flag for eager compilation this class knows ({@code AOTCompileEagerly},
   * experimental in JDK 25); on another JDK the request is logged and ignored rather than passing
   * a flag the JVM might refuse to start with.
   */
  static final int EAGER_FEATURE = 25;

  private final Path dir;
  private final int javaFeature;
  private final boolean eager;
  /** The savers started by this cache and its copies, which share the list. */
  private final List<ProcessHandle> saving;

  private AotCache(Path dir, int javaFeature, boolean eager, List<ProcessHandle> saving) {
    this.dir = dir;
    this.javaFeature = javaFeature;
    this.eager = eager;
    this.saving = saving;
  }

  /** A cache kept in {@code dir} (created when needed), for workers that run on this launcher's JDK. */
  public static AotCache in(Path dir) {
    return new AotCache(dir, Runtime.version().feature(), false, new CopyOnWriteArrayList<>());
  }

  /**
   * This cache, with workers that start from it compiling what the training run found hot as soon
   * as its class is initialized ({@code -XX:+AOTCompileEagerly}), rather than once the method has
   * run often enough again. Full speed comes sooner (W2 on 2 vCPUs: window-64 median 135k to 204k
   * calls/s), at the price of the compiler threads being busy for a second or two right after
   * start, when an idle worker would otherwise use nothing (W1's idle probe: ~25 % of a core in the
   * first 2 s instead of 1-5 %), and of more start-up CPU for many workers on few cores. Off by
   * default; {@code ferry run --eager-jit} or {@code FERRY_EAGER_JIT=1}.
   */
  public AotCache withEagerCompilation(boolean eagerCompilation) {
    if (eagerCompilation && javaFeature != EAGER_FEATURE) {
      log.info("eager compilation from the ahead-of-time cache is known on JDK {} only; ignored on JDK {}",
          EAGER_FEATURE, javaFeature);
      return this;
    }
    return new AotCache(dir, javaFeature, eagerCompilation, saving);
  }

  /** Whether workers that start from a cache compile its hot methods eagerly. */
  public boolean eagerCompilation() {
    return eager;
  }

  /** Whether {@code FERRY_EAGER_JIT} asks for {@link #withEagerCompilation eager compilation}. */
  public static boolean eagerCompilationFromEnvironment() {
    String value = System.getenv(EAGER_VARIABLE);
    return value != null && (value.equals("1") || value.equalsIgnoreCase("true") || value.equalsIgnoreCase("on"));
  }

  /**
   * The directory {@code ferry run} keeps caches in: {@code $FERRY_AOT_CACHE}, or
   * {@code ~/.cache/ferry/aot}; empty if that variable is {@code 0} or {@code off}.
   */
  public static Optional<Path> defaultDirectory() {
    String configured = System.getenv(CACHE_DIR_VARIABLE);
    if (configured != null && !configured.isBlank()) {
      return configured.equals("0") || configured.equalsIgnoreCase("off")
          ? Optional.empty() : Optional.of(Path.of(configured));
    }
    return Optional.of(Path.of(System.getProperty("user.home"), ".cache", "ferry", "aot"));
  }

  /** For tests: as if the workers' JDK were of version {@code feature}. */
  static AotCache in(Path dir, int feature) {
    return new AotCache(dir, feature, false, new CopyOnWriteArrayList<>());
  }

  /** Where the caches are kept. */
  public Path directory() {
    return dir;
  }

  /** Whether the workers' JDK can use a cache at all. */
  public boolean supported() {
    return javaFeature >= MIN_FEATURE;
  }

  /**
   * The flags rank {@code rank} starts with: the cache of its role if there is one; otherwise, for
   * the one rank that trains the role (0, or 1) and if no other launcher is training it, the flags
   * that record a training; otherwise none.
   */
  public List<String> flagsFor(WorkerGroupSpec spec, int rank) {
    if (!archivable(spec.classpath())) {
      return List.of();
    }
    if (!supported() || rank > 1) {
      return rank > 1 && supported() && Files.isRegularFile(cacheFile(spec, 1))
          ? startFrom(cacheFile(spec, 1)) : List.of();
    }
    Path cache = cacheFile(spec, rank);
    if (Files.isRegularFile(cache)) {
      return startFrom(cache);
    }
    if (!claimTraining(spec, rank)) {
      return List.of();
    }
    return List.of("-XX:AOTMode=record", "-XX:AOTConfiguration=" + configFile(spec, rank), QUIET);
  }

  private List<String> startFrom(Path cache) {
    markUsed(cache);
    return eager
        ? List.of("-XX:AOTCache=" + cache, QUIET, "-XX:+UnlockExperimentalVMOptions", "-XX:+AOTCompileEagerly")
        : List.of("-XX:AOTCache=" + cache, QUIET);
  }

  /**
   * After a run that succeeded: starts assembling the cache of each role this run recorded, each
   * in a process of its own ({@link AotCacheSaver}) that this launcher does not wait for: the user
   * gets the prompt back while the cache is written, and the first run that starts after it is
   * complete uses it. Does nothing for roles it did not record. Failures are logged (by the saver,
   * into {@code <cache>.log}); the next run then records again.
   */
  public void finishTraining(WorkerGroupSpec spec) {
    for (int role = 0; role <= Math.min(1, spec.nproc() - 1); role++) {
      Path marker = markerFile(spec, role);
      Path config = configFile(spec, role);
      if (!Files.exists(marker) || !ownsMarker(marker)) {
        continue;
      }
      if (!Files.isRegularFile(config) || !startSaving(spec, role, config, marker)) {
        deleteQuietly(config);
        deleteQuietly(marker);
      }
    }
  }

  /** After a run that failed: drops what it recorded, so that a later run records again. */
  public void abandonTraining(WorkerGroupSpec spec) {
    for (int role = 0; role <= Math.min(1, spec.nproc() - 1); role++) {
      Path marker = markerFile(spec, role);
      if (Files.exists(marker) && ownsMarker(marker)) {
        deleteQuietly(configFile(spec, role));
        deleteQuietly(marker);
      }
    }
  }

  /**
   * Whether the JVM can make a cache for this class path: it refuses (and a recording worker then
   * exits with an error) when an entry is a directory with files in it, such as
   * {@code target/classes}; only jars qualify.
   */
  static boolean archivable(String classpath) {
    for (String entry : classpath.split(File.pathSeparator)) {
      Path path = Path.of(entry.isEmpty() ? "." : entry);
      if (Files.isDirectory(path)) {
        try (Stream<Path> children = Files.list(path)) {
          if (children.findAny().isPresent()) {
            return false;
          }
        } catch (IOException e) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Whether a worker's output line is the JVM's own report that it recorded a training: the
   * launcher asked for the recording, so the report is its business, not the program's output.
   */
  static boolean isTrainingReport(String line) {
    return line.strip().startsWith(RECORDED_REPORT);
  }

  /** The cache file of rank {@code rank}'s role. */
  Path cacheFile(WorkerGroupSpec spec, int rank) {
    return dir.resolve(key(spec) + "-rank" + Math.min(rank, 1) + ".aot");
  }

  private Path configFile(WorkerGroupSpec spec, int rank) {
    return dir.resolve(key(spec) + "-rank" + Math.min(rank, 1) + ".aotconf");
  }

  private Path markerFile(WorkerGroupSpec spec, int rank) {
    return dir.resolve(key(spec) + "-rank" + Math.min(rank, 1) + ".training");
  }

  private boolean claimTraining(WorkerGroupSpec spec, int rank) {
    Path marker = markerFile(spec, rank);
    try {
      Files.createDirectories(dir);
      try {
        Files.writeString(marker, ownerId(), StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE_NEW,
            java.nio.file.StandardOpenOption.WRITE);
        return true;
      } catch (FileAlreadyExistsException busy) {
        FileTime since = Files.getLastModifiedTime(marker);
        if (since.toInstant().isBefore(Instant.now().minus(STALE_MARKER))) {
          Files.writeString(marker, ownerId(), StandardCharsets.UTF_8);
          return true;
        }
        return false;
      }
    } catch (IOException e) {
      log.debug("no AOT training in {}: {}", dir, e.toString());
      return false;
    }
  }

  private static boolean ownsMarker(Path marker) {
    try {
      return Files.readString(marker, StandardCharsets.UTF_8).equals(ownerId());
    } catch (IOException e) {
      return false;
    }
  }

  private static String ownerId() {
    return Long.toString(ProcessHandle.current().pid());
  }

  /** Starts the saver of {@code role}'s cache; false if it could not start (then nothing is saved). */
  private boolean startSaving(WorkerGroupSpec spec, int role, Path config, Path marker) {
    Path cache = cacheFile(spec, role);
    List<String> create = new ArrayList<>();
    create.add(spec.javaExecutable().toString());
    create.addAll(spec.jvmFlags());
    create.addAll(spec.jvmArgs());
    create.add("-XX:AOTMode=create");
    create.add("-XX:AOTConfiguration=" + config);
    create.add(AotCacheSaver.outputFlag(cache));
    create.add("-cp");
    create.add(spec.classpath());
    try {
      Process saver = new ProcessBuilder(AotCacheSaver.command(cache, config, marker, create))
          .redirectErrorStream(true).redirectOutput(AotCacheSaver.logFile(cache).toFile())
          .redirectInput(ProcessBuilder.Redirect.from(new File(NULL_DEVICE))).start();
      saving.add(saver.toHandle());
      log.info("saving what rank {}'s role loaded and compiled in the background, so that the next runs start warm "
          + "({}; once per build, --no-aot-cache skips it)", role == 0 ? "0" : "1+", cache.getFileName());
      return true;
    } catch (IOException e) {
      log.warn("cannot save the AOT cache {}: {}", cache, e.toString());
      return false;
    }
  }

  /** The savers this cache (or a copy of it) started that are still running. */
  List<ProcessHandle> saving() {
    saving.removeIf(handle -> !handle.isAlive());
    return List.copyOf(saving);
  }

  /**
   * Waits, at most {@code timeout}, for the caches this cache (or a copy of it) started saving to
   * be saved or to fail. For a program that runs groups one after another and times them
   * ({@code ferry bench}): its next run then starts from the cache, and no saving competes with it
   * for the CPU. {@code ferry run} does not wait. Returns whether none is still being saved.
   */
  public boolean awaitSaved(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (ProcessHandle saver : saving()) {
      try {
        saver.onExit().get(Math.max(0, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        return false;
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException("waiting for an AOT cache saver failed", e.getCause());
      }
    }
    return saving().isEmpty();
  }

  /** A cache's time is its last use, so that pruning keeps the ones in use. */
  private static void markUsed(Path cache) {
    try {
      Files.setLastModifiedTime(cache, FileTime.fromMillis(System.currentTimeMillis()));
    } catch (IOException e) {
      log.debug("cannot mark {} used: {}", cache, e.toString());
    }
  }

  /**
   * Deletes the caches of the same program and role as {@code kept} beyond the {@link
   * #KEEP_PER_PROGRAM} most recently used (caches of other builds of it, which no run will use
   * while those jars are gone). Only {@code .aot} files named like this class names them.
   */
  void prune(Path kept) {
    String name = kept.getFileName().toString();
    int dash = name.indexOf('-');
    int role = name.lastIndexOf("-rank");
    if (dash < 0 || role < 0) {
      return;
    }
    String program = name.substring(0, dash + 1);
    String suffix = name.substring(role);
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> same = files
          .filter(f -> {
            String n = f.getFileName().toString();
            return n.startsWith(program) && n.endsWith(suffix) && n.length() == name.length();
          })
          .sorted(Comparator.comparing(AotCache::lastModified).reversed())
          .toList();
      for (Path old : same.subList(Math.min(KEEP_PER_PROGRAM, same.size()), same.size())) {
        if (!old.equals(kept)) {
          log.info("dropping the AOT cache {}, unused since {}", old.getFileName(), lastModified(old));
          deleteQuietly(old);
        }
      }
    } catch (IOException e) {
      log.debug("cannot prune AOT caches in {}: {}", dir, e.toString());
    }
  }

  private static FileTime lastModified(Path file) {
    try {
      return Files.getLastModifiedTime(file);
    } catch (IOException e) {
      return FileTime.fromMillis(0);
    }
  }

  /** Identifies what a cache was made for: any difference means another cache. */
  private String key(WorkerGroupSpec spec) {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JDK", e);
    }
    StringBuilder text = new StringBuilder();
    text.append(spec.javaExecutable()).append('\n').append(javaFeature).append(' ').append(Runtime.version()).append('\n');
    spec.jvmFlags().forEach(f -> text.append(f).append('\n'));
    spec.jvmArgs().forEach(f -> text.append(f).append('\n'));
    text.append(spec.mainClass()).append('\n');
    ferrySettings(spec).forEach((name, value) -> text.append(name).append('=').append(value).append('\n'));
    for (String entry : spec.classpath().split(File.pathSeparator)) {
      Path path = Path.of(entry);
      text.append(entry);
      try {
        text.append(' ').append(Files.size(path)).append(' ').append(Files.getLastModifiedTime(path).toMillis());
      } catch (IOException | UncheckedIOException e) {
        text.append(" missing");
      }
      text.append('\n');
    }
    String hash = HexFormat.of().formatHex(digest.digest(text.toString().getBytes(StandardCharsets.UTF_8)));
    String main = spec.mainClass().substring(spec.mainClass().lastIndexOf('.') + 1);
    return main + "-" + hash.substring(0, 16);
  }

  /**
   * The workers' Ferry settings ({@code FERRY_*} variables of the launcher's environment and the
   * spec's), which pick the code a job runs hot: a cache trained over Unix sockets and shared memory
   * has no profiles for the TCP path (W3 over TCP at 16 MiB ran at ~2 GB/s from such a cache and
   * ~4 GB/s from one trained over TCP). Not the cache's own location, nor the eager-compilation
   * switch, which says how to use a cache rather than what to train it on, nor secrets: the
   * authentication token (new for every group; it changes no code path after the handshake) and
   * passwords ({@code FERRY_*_PASSWORD}): a cache's name is a hash of its key, and a short hash of
   * a weak password next to inputs an attacker can read would be worth guessing against.
   */
  private static SortedMap<String, String> ferrySettings(WorkerGroupSpec spec) {
    SortedMap<String, String> settings = new TreeMap<>();
    Map<String, String> env = new HashMap<>(System.getenv());
    env.putAll(spec.env());
    env.forEach((name, value) -> {
      if (name.startsWith("FERRY_") && !name.equals(CACHE_DIR_VARIABLE) && !name.equals(EAGER_VARIABLE)
          && !name.equals(WorkerEnvironment.FERRY_AUTH_TOKEN) && !name.endsWith("_PASSWORD")) {
        settings.put(name, value);
      }
    });
    return settings;
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      log.debug("cannot delete {}: {}", path, e.toString());
    }
  }
}
