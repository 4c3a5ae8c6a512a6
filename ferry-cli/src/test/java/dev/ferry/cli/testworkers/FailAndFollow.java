package dev.ferry.cli.testworkers;

import java.nio.file.Path;

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
      Marks.writeOwnPid(failed);
      System.exit(3);
    }
    if (!Marks.await(failed, 30)) {
      System.exit(99); // rank 0 never failed
    }
    Marks.awaitExitOfPidIn(failed);
    throw new IllegalStateException("rank 1 lost rank 0");
  }
}
