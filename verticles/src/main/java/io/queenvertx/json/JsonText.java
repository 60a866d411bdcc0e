package io.queenvertx.json;

import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes JSON straight into a growable byte array, so stored payloads (already JSON text) are spliced into responses
 * verbatim instead of being parsed and re-encoded. The caller is responsible for structure; {@link #str} escapes.
 * The array is wrapped, not copied, by {@link #buffer()}: appending byte by byte to a Netty-backed Buffer pays a
 * reference-count and capacity check per byte, which was the top of the pop and push profiles.
 */
public final class JsonText {
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] TRUE = "true".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] FALSE = "false".getBytes(StandardCharsets.US_ASCII);
  private static final long[] POW10 = new long[19];

  static {
    long p = 1;
    for (int i = 0; i < POW10.length; i++) {
      POW10[i] = p;
      p *= 10;
    }
  }

  private byte[] buf;
  private int len;
  private boolean needComma;

  public JsonText(int initialSize) {
    this.buf = new byte[Math.max(16, initialSize)];
  }

  public JsonText beginObject() {
    comma();
    put((byte) '{');
    needComma = false;
    return this;
  }

  public JsonText endObject() {
    put((byte) '}');
    needComma = true;
    return this;
  }

  public JsonText beginArray() {
    comma();
    put((byte) '[');
    needComma = false;
    return this;
  }

  public JsonText endArray() {
    put((byte) ']');
    needComma = true;
    return this;
  }

  /** A key inside an object; the value call that follows does not add a comma. */
  public JsonText key(String k) {
    comma();
    writeString(k);
    put((byte) ':');
    needComma = false;
    return this;
  }

  public JsonText str(String v) {
    comma();
    if (v == null) put(NULL);
    else writeString(v);
    needComma = true;
    return this;
  }

  public JsonText num(long v) {
    comma();
    writeLong(v);
    needComma = true;
    return this;
  }

  public JsonText bool(boolean v) {
    comma();
    put(v ? TRUE : FALSE);
    needComma = true;
    return this;
  }

  public JsonText nul() {
    comma();
    put(NULL);
    needComma = true;
    return this;
  }

  /** Splices JSON text verbatim; an empty or null value renders {@code null} (an empty frame). */
  public JsonText raw(byte[] json) {
    comma();
    if (json == null || json.length == 0) put(NULL);
    else put(json);
    needComma = true;
    return this;
  }

  public JsonText field(String k, String v) {
    return key(k).str(v);
  }

  public JsonText field(String k, long v) {
    return key(k).num(v);
  }

  public JsonText field(String k, boolean v) {
    return key(k).bool(v);
  }

  /** The text written so far, wrapping this writer's array (write nothing more after taking it). */
  public Buffer buffer() {
    return BufferInternal.buffer(Unpooled.wrappedBuffer(buf, 0, len));
  }

  /** Bytes written so far. */
  public int length() {
    return len;
  }

  private void comma() {
    if (needComma) put((byte) ',');
  }

  private void ensure(int extra) {
    int need = len + extra;
    if (need > buf.length) buf = Arrays.copyOf(buf, Math.max(need, buf.length * 2));
  }

  private void put(byte b) {
    if (len == buf.length) ensure(1);
    buf[len++] = b;
  }

  private void put(byte[] b) {
    ensure(b.length);
    System.arraycopy(b, 0, buf, len, b.length);
    len += b.length;
  }

  private void writeLong(long v) {
    if (v == Long.MIN_VALUE) {
      put(Long.toString(v).getBytes(StandardCharsets.US_ASCII));
      return;
    }
    ensure(20);
    if (v < 0) {
      buf[len++] = '-';
      v = -v;
    }
    int digits = 1;
    while (digits < POW10.length && v >= POW10[digits]) digits++;
    int end = len + digits;
    for (int i = end - 1; i >= len; i--) {
      buf[i] = (byte) ('0' + (v % 10));
      v /= 10;
    }
    len = end;
  }

  /** A JSON string: ASCII copied byte for byte, the JSON escapes, everything else as UTF-8 (lone surrogates: '?'). */
  private void writeString(String s) {
    int n = s.length();
    ensure(n + 2);
    buf[len++] = '"';
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        if (len == buf.length) ensure(1);
        buf[len++] = (byte) c;
      } else if (c < 0x80) {
        escape(c);
      } else if (c < 0x800) {
        ensure(2);
        buf[len++] = (byte) (0xC0 | (c >> 6));
        buf[len++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        ensure(4);
        buf[len++] = (byte) (0xF0 | (cp >> 18));
        buf[len++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
        buf[len++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
        buf[len++] = (byte) (0x80 | (cp & 0x3F));
      } else if (Character.isSurrogate(c)) {
        put((byte) '?');
      } else {
        ensure(3);
        buf[len++] = (byte) (0xE0 | (c >> 12));
        buf[len++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        buf[len++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    put((byte) '"');
  }

  private void escape(char c) {
    ensure(6);
    buf[len++] = '\\';
    switch (c) {
      case '"' -> buf[len++] = '"';
      case '\\' -> buf[len++] = '\\';
      case '\n' -> buf[len++] = 'n';
      case '\r' -> buf[len++] = 'r';
      case '\t' -> buf[len++] = 't';
      case '\b' -> buf[len++] = 'b';
      case '\f' -> buf[len++] = 'f';
      default -> {
        buf[len++] = 'u';
        buf[len++] = '0';
        buf[len++] = '0';
        buf[len++] = HEX[c >> 4];
        buf[len++] = HEX[c & 0xF];
      }
    }
  }
}
