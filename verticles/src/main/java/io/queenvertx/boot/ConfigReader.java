package io.queenvertx.boot;

import java.util.Locale;
import java.util.Map;

/**
 * Strict reading of environment variables for {@link Config} and its nested records: a value is trimmed, and an
 * empty or unset one means the default. Integers and numbers that do not parse or are out of range, and unknown
 * boolean spellings, throw {@link ConfigException} naming the variable, the value and what is accepted.
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

  int integer(String k, int def) {
    return integer(k, def, Integer.MIN_VALUE, Integer.MAX_VALUE);
  }

  int integer(String k, int def, int min, int max) {
    return (int) lng(k, def, min, max);
  }

  long lng(String k, long def) {
    return lng(k, def, Long.MIN_VALUE, Long.MAX_VALUE);
  }

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

  double dbl(String k, double def) {
    String v = raw(k);
    if (v.isEmpty()) return def;
    try {
      double d = Double.parseDouble(v);
      if (Double.isFinite(d)) return d;
    } catch (NumberFormatException ex) {
      // reported below
    }
    throw ConfigException.of(k, v, "a finite number");
  }

  private static String range(long min, long max) {
    boolean lo = min != Integer.MIN_VALUE && min != Long.MIN_VALUE;
    boolean hi = max != Integer.MAX_VALUE && max != Long.MAX_VALUE;
    if (lo && hi) return " from " + min + " to " + max;
    if (lo) return " of at least " + min;
    if (hi) return " of at most " + max;
    return max == Integer.MAX_VALUE ? " (32-bit)" : "";
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
