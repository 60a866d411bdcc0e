package io.queenvertx.http.server;

import io.vertx.core.buffer.Buffer;

/**
 * Strict UTF-8 (RFC 3629, Unicode table 3-7) over a request's bytes: overlong forms ({@code C0 AF} for {@code /}),
 * encoded surrogates ({@code ED A0 80}), code points past U+10FFFF and stray or truncated bytes are invalid, where
 * Jackson and Vert.x's URI decoder would quietly turn them into other characters. JSON text (RFC 8259 §8.1) is UTF-8
 * and never holds a raw NUL, so a body with one (UTF-16 or UTF-32, which Jackson would otherwise detect and accept)
 * is refused too.
 */
public final class Utf8 {
  private static final long HIGH_BITS = 0x8080808080808080L;
  private static final long LOW_BITS = 0x0101010101010101L;

  private Utf8() {}

  /**
   * The offset of the first byte of {@code b} that does not start a valid UTF-8 sequence (or is a NUL when
   * {@code noNul}), or -1 when every byte is valid. Eight ASCII bytes are checked at a time.
   */
  public static int invalidAt(Buffer b, boolean noNul) {
    int n = b.length();
    int i = 0;
    while (i < n) {
      if (i + 8 <= n) {
        long v = b.getLong(i);
        // no byte with its high bit set, and (when asked) no zero byte: the classic "has a zero byte" test
        if ((v & HIGH_BITS) == 0 && (!noNul || ((v - LOW_BITS) & ~v & HIGH_BITS) == 0)) {
          i += 8;
          continue;
        }
      }
      int c = b.getByte(i) & 0xff;
      if (c < 0x80) {
        if (c == 0 && noNul) return i;
        i++;
        continue;
      }
      int more = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
      if (more < 0 || i + more >= n) return i;
      // the second byte's range excludes overlong forms (E0, F0), surrogates (ED) and code points past U+10FFFF (F4)
      int lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
      int hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
      int c1 = b.getByte(i + 1) & 0xff;
      if (c1 < lo || c1 > hi) return i;
      for (int k = 2; k <= more; k++) {
        int ck = b.getByte(i + k) & 0xff;
        if (ck < 0x80 || ck > 0xbf) return i;
      }
      i += more + 1;
    }
    return -1;
  }
}
