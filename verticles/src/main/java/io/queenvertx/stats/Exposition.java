package io.queenvertx.stats;

/**
 * Prometheus text exposition (format 0.0.4) written family by family: a family's {@code # HELP} and {@code # TYPE}
 * lines, then its samples, contiguous. Label values are escaped (backslash, double quote, newline).
 */
public final class Exposition {
  private final StringBuilder out;

  public Exposition(StringBuilder out) {
    this.out = out;
  }

  /** Starts a family; {@code type} is {@code gauge} or {@code counter}. */
  public Exposition family(String name, String type, String help) {
    out.append("# HELP ").append(name).append(' ').append(help).append('\n')
        .append("# TYPE ").append(name).append(' ').append(type).append('\n');
    return this;
  }

  /** One sample with labels given as alternating names and values (none for an unlabelled one). */
  public Exposition sample(String name, double value, String... labels) {
    out.append(name);
    if (labels.length > 0) {
      out.append('{');
      for (int i = 0; i + 1 < labels.length; i += 2) {
        if (i > 0) out.append(',');
        out.append(labels[i]).append("=\"").append(escape(labels[i + 1])).append('"');
      }
      out.append('}');
    }
    out.append(' ');
    if (value == Math.rint(value) && Math.abs(value) < 1e15) out.append((long) value);
    else out.append(value);
    out.append('\n');
    return this;
  }

  /** A family of one sample. */
  public Exposition single(String name, String type, String help, double value, String... labels) {
    return family(name, type, help).sample(name, value, labels);
  }

  /** Label values escape backslash, double quote and newline. */
  public static String escape(String v) {
    return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
