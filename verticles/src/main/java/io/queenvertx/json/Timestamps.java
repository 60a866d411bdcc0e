package io.queenvertx.json;

import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Wire timestamps: UTC, ending in {@code Z}; pop uses microseconds, inspection routes milliseconds (API.md §5.4, §5.9). */
public final class Timestamps {
  private static final DateTimeFormatter MICROS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'");
  private static final DateTimeFormatter MILLIS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'");

  private Timestamps() {}

  /**
   * {@code yyyy-MM-ddTHH:mm:ss.SSSSSSZ}. Every message of a pop's body carries one: a year of four digits (every
   * timestamp the broker writes) is written digit by digit, as {@link #MICROS} would (a tenth of its cost, issue 39,
   * docs/perf/README.md); any other year goes through the formatter.
   */
  public static String micros(OffsetDateTime t) {
    if (t == null) return null;
    OffsetDateTime u = t.getOffset() == ZoneOffset.UTC ? t : t.withOffsetSameInstant(ZoneOffset.UTC);
    int year = u.getYear();
    if (year < 1 || year > 9999) return u.format(MICROS);
    byte[] b = new byte[27];
    digits(b, 0, year, 4);
    b[4] = '-';
    digits(b, 5, u.getMonthValue(), 2);
    b[7] = '-';
    digits(b, 8, u.getDayOfMonth(), 2);
    b[10] = 'T';
    digits(b, 11, u.getHour(), 2);
    b[13] = ':';
    digits(b, 14, u.getMinute(), 2);
    b[16] = ':';
    digits(b, 17, u.getSecond(), 2);
    b[19] = '.';
    digits(b, 20, u.getNano() / 1000, 6);
    b[26] = 'Z';
    return new String(b, StandardCharsets.ISO_8859_1);
  }

  public static String millis(OffsetDateTime t) {
    return t == null ? null : t.withOffsetSameInstant(ZoneOffset.UTC).format(MILLIS);
  }

  /** {@code value} as {@code width} decimal digits, zero-padded, at {@code at}. */
  private static void digits(byte[] b, int at, int value, int width) {
    for (int i = at + width - 1; i >= at; i--) {
      b[i] = (byte) ('0' + value % 10);
      value /= 10;
    }
  }
}
