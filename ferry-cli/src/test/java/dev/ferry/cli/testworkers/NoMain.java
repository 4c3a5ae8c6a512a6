package dev.ferry.cli.testworkers;

/** Not a worker: a class a user may name by mistake, with a {@code main} java's launcher does not take. */
public final class NoMain {

  private NoMain() {}

  /** Takes an int: not a main method. */
  public static void main(int times) {
    System.out.println("never run " + times);
  }
}
