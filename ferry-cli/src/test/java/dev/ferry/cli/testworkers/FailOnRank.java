package dev.ferry.cli.testworkers;

/**
 * Test worker: {@code FailOnRank FAIL_RANK CODE}. Rank FAIL_RANK exits with CODE; every other rank
 * blocks until it is killed (the test bounds that).
 */
public final class FailOnRank {

  public static void main(String[] args) throws InterruptedException {
    int rank = Integer.parseInt(System.getenv("RANK"));
    System.out.println("rank " + rank + " up");
    if (rank == Integer.parseInt(args[0])) {
      System.err.println("rank " + rank + " failing on purpose");
      System.exit(Integer.parseInt(args[1]));
    }
    Thread.sleep(Long.MAX_VALUE);
  }
}
