package dev.ferry.cli.testworkers;

import java.util.List;

/**
 * Test worker that never finishes. With {@code --ignore-sigterm} it also survives SIGTERM, because
 * a shutdown hook that never returns keeps the JVM from exiting, so only SIGKILL ends it.
 */
public final class Sleeper {

  public static void main(String[] args) throws InterruptedException {
    if (List.of(args).contains("--ignore-sigterm")) {
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
    }
    System.out.println("ready");
    Thread.sleep(Long.MAX_VALUE);
  }
}
