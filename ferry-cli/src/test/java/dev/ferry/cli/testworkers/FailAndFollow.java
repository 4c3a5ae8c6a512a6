package dev.ferry.cli.testworkers;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.concurrent.TimeUnit;

/**
 * Test worker: {@code FailAndFollow DIR}. Rank 0 writes its pid to {@code DIR/failed} and exits with
 * code 3; rank 1 fails because of it as soon as that process has exited (as a peer fails once it
 * notices a lost worker), with an uncaught {@code IllegalStateException("rank 1 lost rank 0")}.
 */
public final class FailAndFollow {

  public static void main(String[] args) throws Exception {
    int rank = Integer.parseInt(System.getenv("RANK"));
    Path dir = Path.of(args[0]);
    Path failed = dir.resolve("failed");
    if (rank == 0) {
      Path written = Files.writeString(dir.resolve("failed.tmp"), Long.toString(ProcessHandle.current().pid()));
      Files.move(written, failed, StandardCopyOption.ATOMIC_MOVE);
      System.exit(3);
    }
    try (WatchService watch = dir.getFileSystem().newWatchService()) {
      dir.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!Files.exists(failed)) {
        WatchKey key = watch.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (key == null) {
          System.exit(99); // rank 0 never failed
        }
        key.pollEvents();
        key.reset();
      }
    }
    long pid = Long.parseLong(Files.readString(failed));
    ProcessHandle.of(pid).ifPresent(process -> process.onExit().join());
    throw new IllegalStateException("rank 1 lost rank 0");
  }
}
