package dev.ferry.cli.testworkers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.concurrent.TimeUnit;

/** Marker files through which test workers of one group wait for one another, and for one another's exit. */
final class Marks {

  private Marks() {}

  /** Writes this process's pid to {@code file}, atomically: who sees the file reads the whole pid. */
  static void writeOwnPid(Path file) throws IOException {
    Path written = Files.writeString(file.resolveSibling(file.getFileName() + ".tmp"),
        Long.toString(ProcessHandle.current().pid()));
    Files.move(written, file, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Waits until the process whose pid {@code file} holds has exited. */
  static void awaitExitOfPidIn(Path file) throws IOException {
    ProcessHandle.of(Long.parseLong(Files.readString(file))).ifPresent(process -> process.onExit().join());
  }

  /** Waits until {@code file} exists, at most {@code seconds}; false if it never came. */
  static boolean await(Path file, long seconds) throws IOException, InterruptedException {
    try (WatchService watch = file.getFileSystem().newWatchService()) {
      file.getParent().register(watch, StandardWatchEventKinds.ENTRY_CREATE);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      while (!Files.exists(file)) {
        WatchKey key = watch.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        if (key == null) {
          return false;
        }
        key.pollEvents();
        key.reset();
      }
      return true;
    }
  }
}
