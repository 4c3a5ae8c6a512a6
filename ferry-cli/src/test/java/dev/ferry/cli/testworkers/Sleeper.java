package dev.ferry.cli.testworkers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Test worker that never finishes. With {@code --ignore-sigterm} it also survives SIGTERM, because
 * a shutdown hook that never returns keeps the JVM from exiting, so only SIGKILL ends it; given a
 * file after it ({@code --ignore-sigterm FILE}), the hook first creates that file, so that a test can
 * tell the launcher has begun to stop it (its output can no longer say so: the launcher closes the
 * pipes when it signals).
 */
public final class Sleeper {

  public static void main(String[] args) throws InterruptedException {
    List<String> options = List.of(args);
    int ignore = options.indexOf("--ignore-sigterm");
    if (ignore >= 0) {
      Path mark = ignore + 1 < args.length ? Path.of(args[ignore + 1]) : null;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          if (mark != null) {
            Files.createFile(mark);
          }
          Thread.sleep(Long.MAX_VALUE);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
    }
    System.out.println("ready");
    Thread.sleep(Long.MAX_VALUE);
  }
}
