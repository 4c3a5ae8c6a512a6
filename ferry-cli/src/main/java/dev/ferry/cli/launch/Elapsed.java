package dev.ferry.cli.launch;

import java.time.Duration;
import java.util.Locale;

/** Formats durations for humans in progress logs and reports: {@code 250 ms}, {@code 2.31 s}, {@code 3 min 5 s}. */
final class Elapsed {

  private Elapsed() {}

  static String format(Duration d) {
    long millis = d.toMillis();
    if (millis < 1_000) {
      return millis + " ms";
    }
    if (millis < 60_000) {
      return String.format(Locale.ROOT, "%.2f s", millis / 1000.0);
    }
    long seconds = d.toSeconds();
    return seconds / 60 + " min " + seconds % 60 + " s";
  }

  static Duration since(long startNanos, long endNanos) {
    return Duration.ofNanos(Math.max(0, endNanos - startNanos));
  }
}
