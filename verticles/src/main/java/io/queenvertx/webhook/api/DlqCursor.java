package io.queenvertx.webhook.api;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.UUID;

/**
 * The opaque {@code cursor} of the dead-letter listing: a position in the {@code (failed_at, id)} keyset, the last
 * row of the previous page, so a page never repeats or skips a row whatever is added or deleted between calls. On the
 * wire it is base64url (no padding) of {@code v1:<failed_at in epoch microseconds>:<id>}; microseconds are
 * PostgreSQL's timestamp precision, so the position is exact.
 */
record DlqCursor(long failedAtMicros, UUID id) {
  /** Years 1 to 9999, well inside timestamptz's range. */
  private static final long MIN_MICROS = -62_135_596_800_000_000L;
  private static final long MAX_MICROS = 253_402_300_799_999_999L;

  static DlqCursor of(OffsetDateTime failedAt, UUID id) {
    Instant i = failedAt.toInstant();
    return new DlqCursor(Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1_000), id);
  }

  String encode() {
    return Base64.getUrlEncoder().withoutPadding()
        .encodeToString(("v1:" + failedAtMicros + ":" + id).getBytes(StandardCharsets.US_ASCII));
  }

  OffsetDateTime failedAt() {
    return Instant.EPOCH.plus(failedAtMicros, ChronoUnit.MICROS).atOffset(ZoneOffset.UTC);
  }

  /** The cursor a client sent back; anything this class did not encode is a 400 naming the parameter. */
  static DlqCursor decode(String text) {
    try {
      String s = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.US_ASCII);
      String[] p = s.split(":", -1);
      if (p.length != 3 || !p[0].equals("v1") || p[2].length() != 36) throw malformed();
      long micros = Long.parseLong(p[1]);
      if (micros < MIN_MICROS || micros > MAX_MICROS) throw malformed();
      return new DlqCursor(micros, UUID.fromString(p[2]));
    } catch (IllegalArgumentException e) {
      throw malformed();
    }
  }

  private static WebhookError malformed() {
    return WebhookError.invalid("cursor is malformed");
  }
}
