package io.queenvertx.codec;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A strict reader for one JSON object whose values are all strings, e.g. the encryption envelope
 * {@code {"encrypted":"…","iv":"…","authTag":"…"}} (ENGINE.md §10). It exists so the read path can sniff every
 * payload for an envelope without pulling a JSON library into the codecs.
 *
 * <p>Accepts exactly: optional JSON whitespace, {@code {}}, or {@code {"k":"v", …}} with string keys and string
 * values, then optional whitespace and the end of input. Strings follow RFC 8259: the escapes
 * {@code \" \\ \/ \b \f \n \r \t \\uXXXX} (surrogate pairs via two escapes), no raw control characters, and raw
 * bytes must be well-formed UTF-8. Anything else (nested values, numbers, literals, duplicate keys, trailing data)
 * makes {@link #parse} return empty, because for its callers anything else simply "is not an envelope".
 *
 * <p>Stateless apart from the cursor of one {@code parse} call; the static entry point is thread-safe.
 */
final class FlatJsonObject {

  /** Control flow for "not a flat string object"; carries no stack trace because it is an expected outcome. */
  private static final class NotFlat extends Exception {
    private static final long serialVersionUID = 1L;
    static final NotFlat INSTANCE = new NotFlat();

    private NotFlat() {
      super("not a flat JSON object of strings", null, false, false);
    }
  }

  private final byte[] in;
  private int pos;

  private FlatJsonObject(byte[] in) {
    this.in = in;
  }

  /** The object's members, or empty if {@code json} is not exactly one flat object of string values. */
  static Optional<Map<String, String>> parse(byte[] json) {
    if (json == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(new FlatJsonObject(json).object());
    } catch (NotFlat e) {
      return Optional.empty();
    }
  }

  private Map<String, String> object() throws NotFlat {
    skipWhitespace();
    expect('{');
    Map<String, String> members = new HashMap<>();
    skipWhitespace();
    if (peek() == '}') {
      pos++;
    } else {
      while (true) {
        skipWhitespace();
        String key = string();
        skipWhitespace();
        expect(':');
        skipWhitespace();
        String value = string();
        if (members.putIfAbsent(key, value) != null) {
          throw NotFlat.INSTANCE; // a duplicate key makes "the" value ambiguous; refuse rather than pick one
        }
        skipWhitespace();
        int c = next();
        if (c == '}') {
          break;
        }
        if (c != ',') {
          throw NotFlat.INSTANCE;
        }
      }
    }
    skipWhitespace();
    if (pos != in.length) {
      throw NotFlat.INSTANCE;
    }
    return members;
  }

  private String string() throws NotFlat {
    expect('"');
    StringBuilder sb = new StringBuilder();
    while (true) {
      int b = next();
      if (b == '"') {
        return sb.toString();
      } else if (b == '\\') {
        escape(sb);
      } else if (b < 0x20) {
        throw NotFlat.INSTANCE;
      } else if (b < 0x80) {
        sb.append((char) b);
      } else {
        sb.appendCodePoint(multiByte(b));
      }
    }
  }

  private void escape(StringBuilder sb) throws NotFlat {
    int c = next();
    switch (c) {
      case '"' -> sb.append('"');
      case '\\' -> sb.append('\\');
      case '/' -> sb.append('/');
      case 'b' -> sb.append('\b');
      case 'f' -> sb.append('\f');
      case 'n' -> sb.append('\n');
      case 'r' -> sb.append('\r');
      case 't' -> sb.append('\t');
      case 'u' -> sb.append((char) hex4());
      default -> throw NotFlat.INSTANCE;
    }
  }

  private int hex4() throws NotFlat {
    int v = 0;
    for (int i = 0; i < 4; i++) {
      int c = next();
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        throw NotFlat.INSTANCE;
      }
      v = (v << 4) | d;
    }
    return v;
  }

  /** Decodes a UTF-8 sequence whose lead byte was {@code lead}, rejecting overlong forms and surrogates. */
  private int multiByte(int lead) throws NotFlat {
    if (lead >= 0xC2 && lead <= 0xDF) {
      return ((lead & 0x1F) << 6) | continuation(0x80, 0xBF);
    }
    if (lead >= 0xE0 && lead <= 0xEF) {
      int lo = lead == 0xE0 ? 0xA0 : 0x80; // E0 80..9F would be overlong
      int hi = lead == 0xED ? 0x9F : 0xBF; // ED A0..BF would encode a surrogate
      int c1 = continuation(lo, hi);
      return ((lead & 0x0F) << 12) | (c1 << 6) | continuation(0x80, 0xBF);
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
      int lo = lead == 0xF0 ? 0x90 : 0x80; // overlong
      int hi = lead == 0xF4 ? 0x8F : 0xBF; // beyond U+10FFFF
      int c1 = continuation(lo, hi);
      int c2 = continuation(0x80, 0xBF);
      return ((lead & 0x07) << 18) | (c1 << 12) | (c2 << 6) | continuation(0x80, 0xBF);
    }
    throw NotFlat.INSTANCE;
  }

  /** Reads one continuation byte within {@code [lo, hi]} and returns its 6 payload bits. */
  private int continuation(int lo, int hi) throws NotFlat {
    int b = next();
    if (b < lo || b > hi) {
      throw NotFlat.INSTANCE;
    }
    return b & 0x3F;
  }

  private void skipWhitespace() {
    while (pos < in.length) {
      byte b = in[pos];
      if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
        return;
      }
      pos++;
    }
  }

  private void expect(char c) throws NotFlat {
    if (next() != c) {
      throw NotFlat.INSTANCE;
    }
  }

  private int peek() throws NotFlat {
    if (pos >= in.length) {
      throw NotFlat.INSTANCE;
    }
    return in[pos] & 0xFF;
  }

  private int next() throws NotFlat {
    int b = peek();
    pos++;
    return b;
  }
}
