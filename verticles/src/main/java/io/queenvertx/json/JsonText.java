package io.queenvertx.json;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;

/**
 * Writes JSON straight into a Buffer, so stored payloads (already JSON text) are spliced into responses verbatim
 * instead of being parsed and re-encoded. The caller is responsible for structure; {@link #str} escapes.
 */
public final class JsonText {
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
  private final Buffer buf;
  private boolean needComma;

  public JsonText(int initialSize) {
    this.buf = Buffer.buffer(initialSize);
  }

  public JsonText beginObject() {
    comma();
    buf.appendByte((byte) '{');
    needComma = false;
    return this;
  }

  public JsonText endObject() {
    buf.appendByte((byte) '}');
    needComma = true;
    return this;
  }

  public JsonText beginArray() {
    comma();
    buf.appendByte((byte) '[');
    needComma = false;
    return this;
  }

  public JsonText endArray() {
    buf.appendByte((byte) ']');
    needComma = true;
    return this;
  }

  /** A key inside an object; the value call that follows does not add a comma. */
  public JsonText key(String k) {
    comma();
    writeString(k);
    buf.appendByte((byte) ':');
    needComma = false;
    return this;
  }

  public JsonText str(String v) {
    comma();
    if (v == null) buf.appendBytes(NULL);
    else writeString(v);
    needComma = true;
    return this;
  }

  public JsonText num(long v) {
    comma();
    buf.appendString(Long.toString(v));
    needComma = true;
    return this;
  }

  public JsonText bool(boolean v) {
    comma();
    buf.appendString(v ? "true" : "false");
    needComma = true;
    return this;
  }

  public JsonText nul() {
    comma();
    buf.appendBytes(NULL);
    needComma = true;
    return this;
  }

  /** Splices JSON text verbatim; an empty or null value renders {@code null} (an empty frame). */
  public JsonText raw(byte[] json) {
    comma();
    if (json == null || json.length == 0) buf.appendBytes(NULL);
    else buf.appendBytes(json);
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

  public Buffer buffer() {
    return buf;
  }

  private void comma() {
    if (needComma) buf.appendByte((byte) ',');
  }

  private void writeString(String s) {
    buf.appendByte((byte) '"');
    int start = 0;
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == '"' || c == '\\') {
        if (i > start) buf.appendString(s.substring(start, i));
        switch (c) {
          case '"' -> buf.appendString("\\\"");
          case '\\' -> buf.appendString("\\\\");
          case '\n' -> buf.appendString("\\n");
          case '\r' -> buf.appendString("\\r");
          case '\t' -> buf.appendString("\\t");
          case '\b' -> buf.appendString("\\b");
          case '\f' -> buf.appendString("\\f");
          default -> buf.appendString("\\u00").appendByte(HEX[c >> 4]).appendByte(HEX[c & 0xF]);
        }
        start = i + 1;
      }
    }
    if (start < n) buf.appendString(start == 0 ? s : s.substring(start));
    buf.appendByte((byte) '"');
  }
}
