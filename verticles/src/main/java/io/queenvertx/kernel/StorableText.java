package io.queenvertx.kernel;

/**
 * Text PostgreSQL can store: no NUL (a {@code text} value cannot hold it: SQLSTATE 22021) and no unpaired UTF-16
 * surrogate (not encodable as UTF-8; the driver would send {@code ?} in its place and store another string than the
 * one the caller sent). Every edge that binds a caller's string checks it first, so such input is a 400 naming the
 * field, never a 500.
 */
public final class StorableText {
  private StorableText() {}

  public static boolean storable(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) return false;
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) return false;
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }
}
