package dev.ferry.cli.testworkers;

import java.nio.file.Path;

/**
 * Test worker: {@code FinishThenFail DIR}. Rank 0 writes its pid to {@code DIR/done} and exits 0;
 * every other rank exits with code 4 once that process has exited, so it fails when no other rank
 * runs (and would at once again if started again).
 */
public final class FinishThenFail {

  public static void main(String[] args) throws Exception {
    int rank = Integer.parseInt(System.getenv("RANK"));
    Path done = Path.of(args[0]).resolve("done");
    if (rank == 0) {
      Marks.writeOwnPid(done);
      return;
    }
    if (!Marks.await(done, 30)) {
      System.exit(99); // rank 0 never finished
    }
    Marks.awaitExitOfPidIn(done);
    System.err.println("rank " + rank + " failing after rank 0 finished");
    System.exit(4);
  }
}
