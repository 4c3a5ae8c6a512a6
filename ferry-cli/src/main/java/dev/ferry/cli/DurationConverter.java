package dev.ferry.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses durations on the command line: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h},
 * combinations such as {@code 1m30s}, or ISO-8601 such as {@code PT90S}. A bare number is
 * rejected because its unit would be a guess.
 */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");
  private static final Pattern WHOLE = Pattern.compile("(\\d+(ms|s|m|h|d))+");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  static Duration parse(String value) {
    String text = value.strip().toLowerCase(Locale.ROOT);
    if (text.startsWith("p")) {
      try {
        return nonNegative(Duration.parse(text), value);
      } catch (DateTimeParseException e) {
        throw invalid(value);
      }
    }
    if (!WHOLE.matcher(text).matches()) {
      throw invalid(value);
    }
    Duration total = Duration.ZERO;
    Matcher m = PART.matcher(text);
    while (m.find()) {
      long n = Long.parseLong(m.group(1));
      total = total.plus(switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      });
    }
    return total;
  }

  private static Duration nonNegative(Duration d, String value) {
    if (d.isNegative()) {
      throw invalid(value);
    }
    return d;
  }

  private static CommandLine.TypeConversionException invalid(String value) {
    return new CommandLine.TypeConversionException("'" + value
        + "' is not a duration; use a number with a unit, e.g. 500ms, 30s, 5m, 1h30m, or ISO-8601 like PT90S");
  }
}
