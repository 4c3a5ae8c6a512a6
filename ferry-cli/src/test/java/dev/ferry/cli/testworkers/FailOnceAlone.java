package dev.ferry.cli.testworkers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Test worker: {@code FailOnceAlone DIR}. Rank 1's first process marks {@code DIR/failed} and exits
 * with code 5; its second says so and marks {@code DIR/again}. Rank 0 runs once: it waits (bounded)
 * until rank 1 came back, then says it ran once and exits 0.
 */
public final class FailOnceAlone {
  public static void main(String[] args) throws IOException {
    int rank = Integer.parseInt(System.getenv("RANK"));
    Path dir = Path.of(args[0]);
    if (rank == 1) {
      if (!Files.exists(dir.resolve("failed"))) {
        Files.createFile(dir.resolve("failed"));
        System.exit(5);
      }
      System.out.println("rank 1 started again");
      Files.createFile(dir.resolve("again"));
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(dir.resolve("again"))) {
      if (System.nanoTime() > deadline) {
        System.exit(7);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
    System.out.println("rank 0 ran once, through rank 1's restart");
  }
}
