package dev.ferry.cli.testworkers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test worker: {@code ThrowTogether DIR RANK...}. The listed ranks wait for one another (each
 * writes a marker in DIR and waits, at most 30 s, for the others'), then each throws an uncaught
 * {@code IllegalStateException("rank R cannot go on")} from main, and takes R seconds in a shutdown
 * hook (a slow graceful shutdown, such as an RPC agent's): the lowest exits first and the launcher
 * stops the others while they are already exiting with their own code. Every other rank blocks until it is killed.
 */
public final class ThrowTogether {

  public static void main(String[] args) throws Exception {
    int rank = Integer.parseInt(System.getenv("RANK"));
    Path dir = Path.of(args[0]);
    List<String> failing = Arrays.asList(args).subList(1, args.length);
    if (!failing.contains(Integer.toString(rank))) {
      Thread.sleep(Long.MAX_VALUE);
    }
    try (WatchService watch = dir.getFileSystem().newWatchService()) {
      dir.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
      Files.createFile(dir.resolve("rank" + rank));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!failing.stream().allMatch(r -> Files.exists(dir.resolve("rank" + r)))) {
        WatchKey key = watch.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (key == null) {
          System.exit(99); // the others never came
        }
        key.pollEvents();
        key.reset();
      }
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        Thread.sleep(1_000L * rank);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }));
    throw new IllegalStateException("rank " + rank + " cannot go on");
  }
}
