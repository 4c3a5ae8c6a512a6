package dev.ferry.cli.testworkers;

/**
 * Test worker: {@code Chatty N} prints N numbered lines to stdout (each written in two pieces, to
 * show that the launcher only forwards whole lines), then a last line without a line terminator.
 */
public final class Chatty {

  public static void main(String[] args) {
    String rank = System.getenv("RANK");
    int n = Integer.parseInt(args[0]);
    String padding = "x".repeat(100);
    for (int i = 0; i < n; i++) {
      System.out.print("rank " + rank + " line " + i + " ");
      System.out.flush();
      System.out.print(padding + "\n");
    }
    System.out.print("rank " + rank + " done");
    System.out.flush();
  }
}
