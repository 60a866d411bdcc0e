package io.queenvertx.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What a command prints: JSON (indented) with {@code --output json}, else aligned columns for a terminal. */
final class Out {
  /** A table cell is cut to this many characters ({@code --output json} has everything). */
  static final int MAX_CELL = 80;

  private final PrintWriter w;
  private final boolean json;

  Out(PrintWriter w, boolean json) {
    this.w = w;
    this.json = json;
  }

  boolean json() {
    return json;
  }

  void json(Object value) {
    w.println(Json.pretty(value));
    w.flush();
  }

  /** One compact JSON value on its own line (streams: {@code tail}). */
  void line(Object value) {
    w.println(Json.write(value));
    w.flush();
  }

  void text(String line) {
    w.println(line);
    w.flush();
  }

  /** Columns under upper-case headers, each as wide as its widest cell; nothing but the headers when no rows. */
  void table(List<String> headers, List<List<Object>> rows) {
    List<List<String>> cells = new ArrayList<>();
    cells.add(headers.stream().map(h -> h.toUpperCase(java.util.Locale.ROOT)).toList());
    for (List<Object> r : rows) cells.add(r.stream().map(Out::cell).toList());
    int[] width = new int[headers.size()];
    for (List<String> r : cells) {
      for (int i = 0; i < r.size(); i++) width[i] = Math.max(width[i], r.get(i).length());
    }
    for (List<String> r : cells) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < r.size(); i++) {
        if (i > 0) b.append("  ");
        b.append(i == r.size() - 1 ? r.get(i) : pad(r.get(i), width[i]));
      }
      w.println(b.toString().stripTrailing());
    }
    w.flush();
  }

  /** One table row per item. */
  static <T> List<List<Object>> rows(List<T> items, java.util.function.Function<T, List<Object>> row) {
    List<List<Object>> rows = new ArrayList<>();
    for (T item : items) rows.add(row.apply(item));
    return rows;
  }

  /** key: value lines, keys aligned. */
  void fields(Map<String, ?> m) {
    int width = m.keySet().stream().mapToInt(String::length).max().orElse(0);
    for (var e : m.entrySet()) w.println(pad(e.getKey() + ":", width + 1) + " " + cell(e.getValue()));
    w.flush();
  }

  static String cell(Object v) {
    String s = v == null ? "-" : v instanceof String t ? t : Json.write(v);
    s = s.replace('\n', ' ').replace('\r', ' ').replace('\t', ' ');
    return s.length() > MAX_CELL ? s.substring(0, MAX_CELL - 1) + "…" : s;
  }

  private static String pad(String s, int width) {
    return s.length() >= width ? s : s + " ".repeat(width - s.length());
  }
}
