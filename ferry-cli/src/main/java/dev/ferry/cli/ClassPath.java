package dev.ferry.cli;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * A class path as {@code java -cp} reads it: entries separated by {@link File#pathSeparator},
 * each a directory, a jar, or {@code DIR/*} for every jar in {@code DIR}. Immutable.
 *
 * <p>{@link #contains} looks a class up the way the workers' JVM will find it, following the
 * {@code Class-Path} attributes of the jars' manifests, so that {@code ferry run} can say "not on
 * the class path" once instead of letting every worker fail alike; {@link #surelyLacksMainMethod}
 * does the same for a class without a main method.
 */
final class ClassPath {

  /** A class every program that uses Ferry needs: the mark of Ferry's runtime on a class path. */
  static final String FERRY_CORE_CLASS = "dev.ferry.rpc.Rpc";

  private final String text;

  private ClassPath(String text) {
    this.text = text;
  }

  static ClassPath of(String text) {
    return new ClassPath(text);
  }

  /** The class path this JVM (the launcher) was started with, wildcards already expanded. */
  static ClassPath ofThisJvm() {
    return new ClassPath(System.getProperty("java.class.path", ""));
  }

  /**
   * The class path of {@code java -jar jar}: the jar alone (the JVM follows its manifest's
   * {@code Class-Path}), with the manifest's {@code Main-Class}.
   *
   * @throws IllegalArgumentException when the file is missing, not a jar, or names no main class
   */
  static Executable ofJar(Path jar) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException("-jar " + jar + ": no such file");
    }
    try (JarFile file = new JarFile(jar.toFile())) {
      Manifest manifest = file.getManifest();
      String main = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.MAIN_CLASS);
      if (main == null || main.isBlank()) {
        throw new IllegalArgumentException("-jar " + jar + ": its manifest names no Main-Class");
      }
      return new Executable(new ClassPath(jar.toAbsolutePath().toString()), main.trim());
    } catch (IOException e) {
      throw new IllegalArgumentException("-jar " + jar + ": not a readable jar (" + e.getMessage() + ")", e);
    }
  }

  /** A class path and the main class to run from it. */
  record Executable(ClassPath classPath, String mainClass) {}

  /** This class path followed by {@code other}'s entries (which lose to this one's). */
  ClassPath then(ClassPath other) {
    if (other.text.isEmpty()) {
      return this;
    }
    return new ClassPath(text.isEmpty() ? other.text : text + File.pathSeparator + other.text);
  }

  /** Whether a JVM started with this class path finds the class {@code className}. */
  boolean contains(String className) {
    String resource = className.replace('.', '/') + ".class";
    try (URLClassLoader loader = new URLClassLoader(urls(), null)) {
      return loader.findResource(resource) != null;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Whether a JVM started with this class path surely finds no main method in {@code className}
   * (see {@link MainMethod}): false when it finds one, and when it cannot tell.
   */
  boolean surelyLacksMainMethod(String className) {
    // The JDK's own classes too: a program's class may extend one of them.
    try (URLClassLoader loader = new URLClassLoader(urls(), ClassLoader.getPlatformClassLoader())) {
      return MainMethod.surelyMissing(className, name -> classFile(loader, name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] classFile(ClassLoader loader, String className) {
    try (InputStream in = loader.getResourceAsStream(className.replace('.', '/') + ".class")) {
      return in == null ? null : in.readAllBytes();
    } catch (IOException e) {
      return null; // unreadable: the workers' JVM will say what is wrong with it
    }
  }

  private URL[] urls() {
    List<URL> urls = new ArrayList<>();
    for (Path entry : entries()) {
      try {
        urls.add(entry.toUri().toURL());
      } catch (MalformedURLException e) {
        throw new IllegalArgumentException("class path entry " + entry + ": " + e.getMessage(), e);
      }
    }
    return urls.toArray(URL[]::new);
  }

  /**
   * The entries that are directories holding jars: java reads a directory entry's class files, not
   * the jars in it (that takes {@code DIR/*}), a common slip worth naming when a class is missing.
   */
  List<Path> directoriesOfJars() {
    List<Path> found = new ArrayList<>();
    for (String entry : text.split(File.pathSeparator)) {
      if (entry.isEmpty() || entry.equals("*") || entry.endsWith(File.separator + "*")) {
        continue;
      }
      List<Path> jars = new ArrayList<>();
      jarsIn(Path.of(entry), jars);
      if (!jars.isEmpty()) {
        found.add(Path.of(entry));
      }
    }
    return found;
  }

  private List<Path> entries() {
    List<Path> entries = new ArrayList<>();
    for (String entry : text.split(File.pathSeparator)) {
      if (entry.isEmpty()) {
        continue;
      }
      if (entry.equals("*") || entry.endsWith(File.separator + "*")) {
        jarsIn(Path.of(entry.substring(0, entry.length() - 1)), entries);
      } else {
        entries.add(Path.of(entry));
      }
    }
    return entries;
  }

  // As java's launcher expands DIR/*: the files of DIR ending in .jar or .JAR, no subdirectories.
  private static void jarsIn(Path dir, List<Path> into) {
    Path directory = dir.toString().isEmpty() ? Path.of(".") : dir;
    if (!Files.isDirectory(directory)) {
      return;
    }
    try (DirectoryStream<Path> jars = Files.newDirectoryStream(directory, "*.{jar,JAR}")) {
      jars.forEach(into::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String toString() {
    return text;
  }
}
