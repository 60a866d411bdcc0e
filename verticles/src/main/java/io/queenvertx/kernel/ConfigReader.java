package io.queenvertx.kernel;

import java.util.Locale;
import java.util.Map;

/**
 * Strict reading of environment variables for {@link Config} and its nested records: a value is trimmed, and an
 * empty or unset one means the default. Every integer and number has a range (there is no unbounded reader, and no
 * setting clamps a value into its range): one that does not parse or is out of range, and an unknown boolean
 * spelling, throw {@link ConfigException} naming the variable, the value and what is accepted.
 */
final class ConfigReader {
  private final Map<String, String> env;

  ConfigReader(Map<String, String> env) {
    this.env = env;
  }

  /** The trimmed value, {@code ""} when unset. */
  String raw(String k) {
    String v = env.get(k);
    return v == null ? "" : v.trim();
  }

  /** The value exactly as given (secrets such as passwords and PEM keys keep their spaces), else {@code def}. */
  String untrimmed(String k, String def) {
    return env.getOrDefault(k, def);
  }

  String str(String k, String def) {
    String v = raw(k);
    return v.isEmpty() ? def : v;
  }

  /** An integer within {@code min..max}; {@code max} {@link Integer#MAX_VALUE} reads "of at least min (32-bit)". */
  int integer(String k, int def, int min, int max) {
    return (int) lng(k, def, min, max);
  }

  /** A 64-bit integer within {@code min..max}; {@code max} {@link Long#MAX_VALUE} reads "of at least min". */
  long lng(String k, long def, long min, long max) {
    String v = raw(k);
    if (v.isEmpty()) return def;
    String accepted = "an integer" + range(min, max);
    long parsed;
    try {
      parsed = Long.parseLong(v);
    } catch (NumberFormatException ex) {
      throw ConfigException.of(k, v, accepted);
    }
    if (parsed < min || parsed > max) throw ConfigException.of(k, v, accepted);
    return parsed;
  }

  /** A finite number of at least {@code min}. */
  double dbl(String k, double def, double min) {
    String v = raw(k);
    if (v.isEmpty()) return def;
    try {
      double d = Double.parseDouble(v);
      if (Double.isFinite(d) && d >= min) return d;
    } catch (NumberFormatException ex) {
      // reported below
    }
    throw ConfigException.of(k, v, "a finite number of at least "
        + java.math.BigDecimal.valueOf(min).stripTrailingZeros().toPlainString());
  }

  private static String range(long min, long max) {
    if (max == Integer.MAX_VALUE) return " of at least " + min + " (32-bit)";
    if (max == Long.MAX_VALUE) return " of at least " + min;
    return " from " + min + " to " + max;
  }

  boolean bool(String k, boolean def) {
    String v = raw(k).toLowerCase(Locale.ROOT);
    return switch (v) {
      case "" -> def;
      case "true", "1", "yes", "on" -> true;
      case "false", "0", "no", "off" -> false;
      default -> throw ConfigException.of(k, raw(k), "a boolean (true/false, 1/0, yes/no, on/off)");
    };
  }
}
