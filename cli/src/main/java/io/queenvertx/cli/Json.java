package io.queenvertx.cli;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON the CLI reads and writes, without a library: values are {@code Map<String,Object>} (key order kept),
 * {@code List<Object>}, {@code String}, {@code Long} or {@code BigDecimal}, {@code Boolean} and {@code null}.
 */
final class Json {
  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /** Parses one JSON value (surrounding white space allowed); anything else is an IllegalArgumentException. */
  static Object parse(String text) {
    Json p = new Json(text);
    p.space();
    Object v = p.value();
    p.space();
    if (p.at != text.length()) throw p.error("unexpected text after the value");
    return v;
  }

  /** The value of {@code text} when it is JSON, else null with {@code ok[0]} false. */
  static Object tryParse(String text, boolean[] ok) {
    try {
      Object v = parse(text);
      ok[0] = true;
      return v;
    } catch (IllegalArgumentException e) {
      ok[0] = false;
      return null;
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Object v) {
    return v instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  @SuppressWarnings("unchecked")
  static List<Object> array(Object v) {
    return v instanceof List<?> l ? (List<Object>) l : List.of();
  }

  /** {@code o[key]} of an object, or null. */
  static Object get(Object o, String key) {
    return object(o).get(key);
  }

  static String string(Object o, String key) {
    Object v = get(o, key);
    return v == null ? null : v instanceof String s ? s : write(v);
  }

  static long number(Object o, String key) {
    return get(o, key) instanceof Number n ? n.longValue() : 0L;
  }

  private Object value() {
    if (at >= text.length()) throw error("unexpected end of text");
    char c = text.charAt(at);
    switch (c) {
      case '{':
        return obj();
      case '[':
        return arr();
      case '"':
        return str();
      case 't':
        return word("true", Boolean.TRUE);
      case 'f':
        return word("false", Boolean.FALSE);
      case 'n':
        return word("null", null);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return num();
        throw error("unexpected character '" + c + "'");
    }
  }

  private Map<String, Object> obj() {
    Map<String, Object> m = new LinkedHashMap<>();
    at++;
    space();
    if (peek('}')) return m;
    while (true) {
      space();
      if (at >= text.length() || text.charAt(at) != '"') throw error("expected a key");
      String k = str();
      space();
      expect(':');
      space();
      m.put(k, value());
      space();
      if (peek('}')) return m;
      expect(',');
    }
  }

  private List<Object> arr() {
    List<Object> l = new ArrayList<>();
    at++;
    space();
    if (peek(']')) return l;
    while (true) {
      space();
      l.add(value());
      space();
      if (peek(']')) return l;
      expect(',');
    }
  }

  private String str() {
    StringBuilder b = new StringBuilder();
    at++;
    while (true) {
      if (at >= text.length()) throw error("unterminated string");
      char c = text.charAt(at++);
      if (c == '"') return b.toString();
      if (c < 0x20) throw error("control character in a string");
      if (c != '\\') {
        b.append(c);
        continue;
      }
      if (at >= text.length()) throw error("unterminated escape");
      char e = text.charAt(at++);
      switch (e) {
        case '"', '\\', '/' -> b.append(e);
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'n' -> b.append('\n');
        case 'r' -> b.append('\r');
        case 't' -> b.append('\t');
        case 'u' -> {
          if (at + 4 > text.length()) throw error("short \\u escape");
          try {
            b.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          } catch (NumberFormatException bad) {
            throw error("bad \\u escape");
          }
          at += 4;
        }
        default -> throw error("bad escape \\" + e);
      }
    }
  }

  private Object num() {
    int start = at;
    if (text.charAt(at) == '-') at++;
    int digits = at;
    while (at < text.length() && Character.isDigit(text.charAt(at))) at++;
    if (at == digits) throw error("a number needs digits");
    if (text.charAt(digits) == '0' && at - digits > 1) throw error("leading zero");
    boolean integral = true;
    if (at < text.length() && text.charAt(at) == '.') {
      integral = false;
      at++;
      int frac = at;
      while (at < text.length() && Character.isDigit(text.charAt(at))) at++;
      if (at == frac) throw error("a fraction needs digits");
    }
    if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
      integral = false;
      at++;
      if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) at++;
      int exp = at;
      while (at < text.length() && Character.isDigit(text.charAt(at))) at++;
      if (at == exp) throw error("an exponent needs digits");
    }
    String n = text.substring(start, at);
    if (integral && n.length() < 19) return Long.parseLong(n);
    return new BigDecimal(n);
  }

  private Object word(String w, Object v) {
    if (!text.startsWith(w, at)) throw error("unexpected word");
    at += w.length();
    return v;
  }

  private boolean peek(char c) {
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) {
    if (!peek(c)) throw error("expected '" + c + "'");
  }

  private void space() {
    while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) at++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("not JSON: " + what + " at character " + at);
  }

  /** Compact JSON text of a value. */
  static String write(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v, -1, 0);
    return b.toString();
  }

  /** Indented JSON text (two spaces) of a value. */
  static String pretty(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v, 2, 0);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v, int indent, int depth) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String s) {
      quote(b, s);
    } else if (v instanceof Number || v instanceof Boolean) {
      b.append(v);
    } else if (v instanceof Map<?, ?> m) {
      if (m.isEmpty()) {
        b.append("{}");
        return;
      }
      b.append('{');
      boolean first = true;
      for (var e : m.entrySet()) {
        if (!first) b.append(',');
        first = false;
        newline(b, indent, depth + 1);
        quote(b, String.valueOf(e.getKey()));
        b.append(indent < 0 ? ":" : ": ");
        write(b, e.getValue(), indent, depth + 1);
      }
      newline(b, indent, depth);
      b.append('}');
    } else if (v instanceof List<?> l) {
      if (l.isEmpty()) {
        b.append("[]");
        return;
      }
      b.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) b.append(',');
        newline(b, indent, depth + 1);
        write(b, l.get(i), indent, depth + 1);
      }
      newline(b, indent, depth);
      b.append(']');
    } else {
      quote(b, v.toString());
    }
  }

  private static void newline(StringBuilder b, int indent, int depth) {
    if (indent < 0) return;
    b.append('\n');
    b.append(" ".repeat(indent * depth));
  }

  private static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    b.append('"');
  }
}
