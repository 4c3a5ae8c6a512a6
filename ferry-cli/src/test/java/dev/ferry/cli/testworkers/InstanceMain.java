package dev.ferry.cli.testworkers;

/** Test worker started from an instance {@code void main()}, which JDK 25's launcher accepts. */
public class InstanceMain {

  void main() {
    System.out.println("instance main of rank " + System.getenv("RANK"));
  }
}
