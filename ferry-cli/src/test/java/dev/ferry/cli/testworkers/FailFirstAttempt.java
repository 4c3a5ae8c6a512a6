package dev.ferry.cli.testworkers;

/**
 * Test worker: {@code FailFirstAttempt FAIL_RANK CODE}. In the first attempt of a job (restart count
 * 0) rank FAIL_RANK exits with CODE and the others wait to be stopped; in a restarted one every rank
 * says which attempt it is and exits 0.
 */
public final class FailFirstAttempt {
  public static void main(String[] args) throws InterruptedException {
    int rank = Integer.parseInt(System.getenv("RANK"));
    int attempt = Integer.parseInt(System.getenv("TORCHELASTIC_RESTART_COUNT"));
    if (attempt > 0) {
      System.out.println("attempt " + attempt + " rank " + rank + " of " + System.getenv("WORLD_SIZE"));
      return;
    }
    if (rank == Integer.parseInt(args[0])) {
      System.exit(Integer.parseInt(args[1]));
    }
    Thread.sleep(Long.MAX_VALUE);
  }
}
