package dev.ferry.cli.testworkers;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Test worker: {@code ThrowEveryAttempt DIR RANK}. Every process of rank RANK throws an uncaught
 * {@code IllegalStateException("rank R attempt N")}, N counting its processes (a file in DIR each);
 * every other rank blocks until it is killed.
 */
public final class ThrowEveryAttempt {

  public static void main(String[] args) throws Exception {
    int rank = Integer.parseInt(System.getenv("RANK"));
    if (rank != Integer.parseInt(args[1])) {
      Thread.sleep(Long.MAX_VALUE);
    }
    Path dir = Path.of(args[0]);
    int attempt = 1;
    while (!tryCreate(dir.resolve("attempt" + attempt))) {
      attempt++;
    }
    throw new IllegalStateException("rank " + rank + " attempt " + attempt);
  }

  private static boolean tryCreate(Path file) {
    try {
      Files.createFile(file);
      return true;
    } catch (java.nio.file.FileAlreadyExistsException e) {
      return false;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
