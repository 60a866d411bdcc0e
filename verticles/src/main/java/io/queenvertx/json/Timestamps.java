package io.queenvertx.json;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** Wire timestamps: UTC, ending in {@code Z}; pop uses microseconds, inspection routes milliseconds (API.md §5.4, §5.9). */
public final class Timestamps {
  private static final DateTimeFormatter MICROS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'");
  private static final DateTimeFormatter MILLIS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'");

  private Timestamps() {}

  public static String micros(OffsetDateTime t) {
    return t == null ? null : t.withOffsetSameInstant(ZoneOffset.UTC).format(MICROS);
  }

  public static String millis(OffsetDateTime t) {
    return t == null ? null : t.withOffsetSameInstant(ZoneOffset.UTC).format(MILLIS);
  }
}
