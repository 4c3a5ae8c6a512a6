package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cli.launch.TestWorkers;
import dev.ferry.cli.testworkers.EnvEcho;
import dev.ferry.cli.testworkers.InheritedMain;
import dev.ferry.cli.testworkers.InstanceMain;
import dev.ferry.cli.testworkers.NoMain;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Class paths as {@code java -cp} reads them, and where {@code ferry run} adds Ferry's libraries. */
class ClassPathTest {

  @TempDir Path dir;

  private Path directoryWith(String name, String className) throws IOException {
    Path root = Files.createDirectories(dir.resolve(name));
    Path file = root.resolve(className.replace('.', '/') + ".class");
    Files.createDirectories(file.getParent());
    Files.write(file, new byte[] {(byte) 0xCA, (byte) 0xFE});
    return root;
  }

  private Path jarWith(Path folder, String className) throws IOException {
    Files.createDirectories(folder);
    Path jar = folder.resolve(className + ".jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), new Manifest())) {
      out.putNextEntry(new JarEntry(className.replace('.', '/') + ".class"));
      out.closeEntry();
    }
    return jar;
  }

  @Test
  void findsClassesInDirectoriesJarsAndWildcards() throws IOException {
    Path classes = directoryWith("classes", "my.app.Main");
    jarWith(dir.resolve("deps"), "my.lib.Helper");

    ClassPath path = ClassPath.of(classes + File.pathSeparator + dir.resolve("deps") + File.separator + "*");

    assertThat(path.contains("my.app.Main")).isTrue();
    assertThat(path.contains("my.lib.Helper")).isTrue();
    assertThat(path.contains("my.app.Other")).isFalse();
    assertThat(ClassPath.of(dir.resolve("nothing-here") + File.separator + "*").contains("my.app.Main")).isFalse();
  }

  @Test
  void aMainMethodIsLookedForAsJavasLauncherDoesAndMissingOnlyWhenSure() throws IOException {
    ClassPath workers = ClassPath.of(TestWorkers.classpath());
    // Its superclass InstanceMain, whose main it inherits, is not on this one.
    Path alone = Files.createDirectories(dir.resolve("alone/dev/ferry/cli/testworkers"));
    Files.copy(Path.of(TestWorkers.classpath(), "dev/ferry/cli/testworkers/InheritedMain.class"),
        alone.resolve("InheritedMain.class"));

    assertThat(workers.surelyLacksMainMethod(NoMain.class.getName())).as("main(int) only").isTrue();
    assertThat(workers.surelyLacksMainMethod(EnvEcho.class.getName())).as("public static").isFalse();
    assertThat(workers.surelyLacksMainMethod(InstanceMain.class.getName())).as("void main()").isFalse();
    assertThat(workers.surelyLacksMainMethod(InheritedMain.class.getName())).as("inherited").isFalse();
    assertThat(ClassPath.of(dir.resolve("alone").toString()).surelyLacksMainMethod(InheritedMain.class.getName()))
        .as("superclass missing: the JVM will say").isFalse();
    assertThat(ClassPath.of(directoryWith("broken", "my.app.Main").toString()).surelyLacksMainMethod("my.app.Main"))
        .as("not a class file: the JVM will say").isFalse();
  }

  @Test
  void ferrysLibrariesFollowAProgramThatLacksThem() throws IOException {
    ClassPath program = ClassPath.of(directoryWith("app", "my.app.Main").toString());
    ClassPath launcher = ClassPath.of(directoryWith("ferry", ClassPath.FERRY_CORE_CLASS).toString());

    ClassPath workers = RunCommand.withFerry(program, launcher);

    assertThat(workers.toString()).isEqualTo(program + File.pathSeparator + launcher);
    assertThat(workers.contains("my.app.Main")).isTrue();
    assertThat(workers.contains(ClassPath.FERRY_CORE_CLASS)).isTrue();
  }

  @Test
  void aProgramThatBringsItsOwnFerryGetsNothingAdded() throws IOException {
    ClassPath program = ClassPath.of(jarWith(dir.resolve("deps"), ClassPath.FERRY_CORE_CLASS).toString());
    ClassPath launcher = ClassPath.of(directoryWith("ferry", ClassPath.FERRY_CORE_CLASS).toString());

    assertThat(RunCommand.withFerry(program, launcher)).hasToString(program.toString());
  }

  @Test
  void aLauncherWithoutFerryAddsNothing() throws IOException {
    ClassPath program = ClassPath.of(directoryWith("app", "my.app.Main").toString());
    ClassPath launcher = ClassPath.of(directoryWith("tools", "some.Tool").toString());

    assertThat(RunCommand.withFerry(program, launcher)).hasToString(program.toString());
  }
}
