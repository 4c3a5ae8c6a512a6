package dev.ferry.cli;

import java.util.List;

/** Stands in for dev.ferry.bench.BenchMain: remembers its arguments, fails on request. */
public final class FakeBench {

  static volatile List<String> lastArgs;

  public static void main(String[] args) {
    lastArgs = List.of(args);
    if (lastArgs.contains("--explode")) {
      throw new IllegalArgumentException("bench exploded");
    }
  }
}
