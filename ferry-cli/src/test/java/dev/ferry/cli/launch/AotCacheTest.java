package dev.ferry.cli.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.ferry.cli.testworkers.EnvEcho;
import dev.ferry.cli.testworkers.FailOnRank;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AotCacheTest {

  @TempDir Path dir;
  @TempDir Path jars;

  /** The test workers as a jar: the JVM caches classes from jars only. */
  private WorkerGroupSpec.Builder spec(Class<?> main, int nproc, String... args) throws IOException {
    Path jar = jars.resolve("workers.jar");
    if (!Files.exists(jar)) {
      Path classes = Path.of(TestWorkers.classpath());
      try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
          Stream<Path> all = Files.walk(classes.resolve("dev/ferry/cli/testworkers"))) {
        for (Path file : all.filter(Files::isRegularFile).toList()) {
          out.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
          out.write(Files.readAllBytes(file));
          out.closeEntry();
        }
      }
    }
    return TestWorkers.spec(main, nproc, args).classpath(jar.toString());
  }

  private static GroupResult run(WorkerGroupSpec spec) throws Exception {
    try (WorkerGroup group = new WorkerGroup(spec).start()) {
      return group.awaitCompletion(Duration.ofSeconds(60));
    }
  }

  private List<String> files() throws IOException {
    try (Stream<Path> list = Files.list(dir)) {
      return list.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aClassPathWithDirectoriesOfClassesGetsNoCache() {
    AotCache cache = AotCache.in(dir);
    WorkerGroupSpec spec = TestWorkers.spec(EnvEcho.class, 2).aotCache(cache).build();
    assertThat(WorkerCommand.commandLine(spec, 0)).noneMatch(flag -> flag.startsWith("-XX:AOT"));
    assertThat(dir).isEmptyDirectory();
  }

  @Test
  void beforeJdk25NothingChanges() throws IOException {
    AotCache cache = AotCache.in(dir, 21);
    WorkerGroupSpec spec = spec(EnvEcho.class, 2).aotCache(cache).build();
    assertThat(cache.supported()).isFalse();
    assertThat(WorkerCommand.commandLine(spec, 0)).noneMatch(flag -> flag.startsWith("-XX:AOT"));
    assertThat(dir).isEmptyDirectory();
  }

  @Test
  void theFirstRunTrainsEachRoleAndLaterRunsStartFromTheCache() throws Exception {
    assumeThat(Runtime.version().feature()).isGreaterThanOrEqualTo(AotCache.MIN_FEATURE);
    AotCache cache = AotCache.in(dir);
    WorkerGroupSpec spec = spec(EnvEcho.class, 3).aotCache(cache).build();

    assertThat(run(spec).succeeded()).isTrue();
    awaitSaved(cache);
    assertThat(files()).allMatch(name -> name.endsWith(".aot")).hasSize(2); // rank 0's role, the others'

    List<String> rank0 = WorkerCommand.commandLine(spec, 0);
    List<String> rank2 = WorkerCommand.commandLine(spec, 2);
    assertThat(rank0).contains("-XX:AOTCache=" + cache.cacheFile(spec, 0));
    assertThat(rank2).contains("-XX:AOTCache=" + cache.cacheFile(spec, 1));
    assertThat(run(spec).succeeded()).isTrue();
    assertThat(files()).hasSize(2);
  }

  @Test
  void theLauncherReturnsWhileTheCacheIsSavedAndNoRunStartsFromItOrTrainsItUntilItIsComplete() throws Exception {
    assumeThat(Runtime.version().feature()).isGreaterThanOrEqualTo(AotCache.MIN_FEATURE);
    AotCache cache = AotCache.in(dir);
    WorkerGroupSpec spec = spec(EnvEcho.class, 1).aotCache(cache).build();

    assertThat(run(spec).succeeded()).isTrue();
    // The group's result is in while the cache is still being written (a JVM that takes seconds) ...
    List<ProcessHandle> savers = cache.saving();
    assertThat(savers).hasSize(1);
    // ... under another name: a run starting now neither uses the half-written file nor trains anew.
    assertThat(WorkerCommand.commandLine(spec, 0)).noneMatch(flag -> flag.startsWith("-XX:AOT"));
    assertThat(dir.resolve(cache.cacheFile(spec, 0).getFileName())).doesNotExist();

    awaitSaved(cache);
    assertThat(savers.get(0).isAlive()).isFalse();
    assertThat(files()).containsExactly(cache.cacheFile(spec, 0).getFileName().toString()); // no marker, log, part
    assertThat(WorkerCommand.commandLine(spec, 0)).contains("-XX:AOTCache=" + cache.cacheFile(spec, 0));
  }

  /** Waits, bounded, for the savers {@code cache} started: the cache is complete, or failed, when they are gone. */
  private static void awaitSaved(AotCache cache) throws Exception {
    assertThat(cache.awaitSaved(Duration.ofMinutes(2))).as("caches saved within 2 minutes").isTrue();
  }

  @Test
  void ferrySettingsOfTheWorkersGetACacheOfTheirOwn() throws IOException {
    AotCache cache = AotCache.in(dir);
    Path plain = cache.cacheFile(spec(EnvEcho.class, 2).build(), 0);
    Path overTcp = cache.cacheFile(spec(EnvEcho.class, 2).putEnv("FERRY_UNIX_SOCKETS", "0").build(), 0);
    Path otherVariable = cache.cacheFile(spec(EnvEcho.class, 2).putEnv("UNRELATED_SETTING", "1").build(), 0);
    Path eager = cache.cacheFile(spec(EnvEcho.class, 2).putEnv("FERRY_EAGER_JIT", "1").build(), 0);
    Path token = cache.cacheFile(spec(EnvEcho.class, 2)
        .putEnv(WorkerEnvironment.FERRY_AUTH_TOKEN, WorkerEnvironment.newAuthToken()).build(), 0);

    assertThat(overTcp).isNotEqualTo(plain);
    assertThat(otherVariable).isEqualTo(plain);
    assertThat(eager).as("eager compilation uses the same cache").isEqualTo(plain);
    assertThat(token).as("a group's token (new for every run) uses the same cache").isEqualTo(plain);
    Path password = cache.cacheFile(spec(EnvEcho.class, 2).putEnv("FERRY_TLS_KEYSTORE_PASSWORD", "secret").build(), 0);
    assertThat(password).as("passwords stay out of the key").isEqualTo(plain);
  }

  @Test
  void aFailedRunLeavesNoCacheAndTheNextRunTrainsAgain() throws Exception {
    assumeThat(Runtime.version().feature()).isGreaterThanOrEqualTo(AotCache.MIN_FEATURE);
    AotCache cache = AotCache.in(dir);
    WorkerGroupSpec failing = spec(FailOnRank.class, 2, "1", "3").aotCache(cache).build();

    assertThat(run(failing).succeeded()).isFalse();
    assertThat(files()).isEmpty();
    assertThat(WorkerCommand.commandLine(failing, 0)).contains("-XX:AOTMode=record");
  }

  @Test
  void aRoleAnotherLauncherIsTrainingIsNeitherTrainedNorUsed() throws Exception {
    assumeThat(Runtime.version().feature()).isGreaterThanOrEqualTo(AotCache.MIN_FEATURE);
    AotCache cache = AotCache.in(dir);
    WorkerGroupSpec spec = spec(EnvEcho.class, 1).aotCache(cache).build();
    Path marker = Path.of(cache.cacheFile(spec, 0).toString().replace(".aot", ".training"));
    Files.writeString(marker, "another launcher");

    assertThat(WorkerCommand.commandLine(spec, 0)).noneMatch(flag -> flag.startsWith("-XX:AOT"));
    assertThat(run(spec).succeeded()).isTrue();
    assertThat(files()).containsExactly(marker.getFileName().toString());
  }

  @Test
  void eagerCompilationAddsItsFlagOnlyWhereWorkersStartFromACache() throws Exception {
    assumeThat(Runtime.version().feature()).isEqualTo(AotCache.EAGER_FEATURE);
    AotCache cache = AotCache.in(dir).withEagerCompilation(true);
    assertThat(cache.eagerCompilation()).isTrue();
    WorkerGroupSpec spec = spec(EnvEcho.class, 3).aotCache(cache).build();

    assertThat(run(spec).succeeded()).isTrue(); // trains as usual
    awaitSaved(cache);

    for (int rank = 0; rank < 3; rank++) {
      assertThat(WorkerCommand.commandLine(spec, rank))
          .contains("-XX:+UnlockExperimentalVMOptions", "-XX:+AOTCompileEagerly");
    }
    assertThat(run(spec).succeeded()).isTrue();
    assertThat(WorkerCommand.commandLine(spec(EnvEcho.class, 3).aotCache(AotCache.in(dir)).build(), 0))
        .doesNotContain("-XX:+AOTCompileEagerly");
  }

  @Test
  void eagerCompilationIsIgnoredOnAnotherJdk() {
    AotCache cache = AotCache.in(dir, 26).withEagerCompilation(true);
    assertThat(cache.eagerCompilation()).isFalse();
  }

  @Test
  void savingACacheKeepsOnlyTheMostRecentlyUsedOfTheSameProgramAndRole() throws IOException {
    AotCache cache = AotCache.in(dir);
    long now = System.currentTimeMillis();
    List<Path> olderBuilds = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Path old = dir.resolve("Main-" + "%016x".formatted(i) + "-rank0.aot");
      Files.writeString(old, "old build " + i);
      Files.setLastModifiedTime(old, java.nio.file.attribute.FileTime.fromMillis(now - (i + 1) * 60_000L));
      olderBuilds.add(old);
    }
    Path otherRole = Files.writeString(dir.resolve("Main-00000000000000aa-rank1.aot"), "rank 1+");
    Path otherProgram = Files.writeString(dir.resolve("Other-00000000000000bb-rank0.aot"), "other");
    Path fresh = Files.writeString(dir.resolve("Main-00000000000000ff-rank0.aot"), "just saved");

    cache.prune(fresh);

    // the new one and the three most recently used older ones stay; other roles and programs are untouched
    assertThat(files()).containsExactlyInAnyOrder(fresh.getFileName().toString(),
        olderBuilds.get(0).getFileName().toString(), olderBuilds.get(1).getFileName().toString(),
        olderBuilds.get(2).getFileName().toString(),
        otherRole.getFileName().toString(), otherProgram.getFileName().toString());
  }
}
