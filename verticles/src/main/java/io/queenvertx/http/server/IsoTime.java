package io.queenvertx.http.server;

import io.queenvertx.kernel.ApiError;
import io.vertx.core.json.Json;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * Timestamps a client sends in a management body (seek, subscription): ISO-8601 with an offset or {@code Z}
 * ({@code 2026-07-30T11:02:44.512873Z}); a date-time without an offset, or a bare date, is read as UTC. Anything else
 * is a 400 naming the field, and so is an instant outside the years 0001 to 9999 (UTC): beyond them PostgreSQL's
 * timestamptz overflows or the driver silently stores {@code infinity}, so a seek or subscription would be answered
 * 200 with another instant than the one sent.
 */
public final class IsoTime {
  public static final int MIN_YEAR = 1;
  public static final int MAX_YEAR = 9999;

  private IsoTime() {}

  public static OffsetDateTime parse(String field, Object value) {
    if (value instanceof String s) {
      String t = s.strip();
      try {
        return inRange(field, OffsetDateTime.parse(t));
      } catch (DateTimeParseException withoutOffset) {
        try {
          return inRange(field, LocalDateTime.parse(t).atOffset(ZoneOffset.UTC));
        } catch (DateTimeParseException notDateTime) {
          try {
            return inRange(field, LocalDate.parse(t).atStartOfDay().atOffset(ZoneOffset.UTC));
          } catch (DateTimeParseException notDate) {
            // reported below
          }
        }
      }
    }
    String shown = Json.encode(value);
    if (shown.length() > 100) shown = shown.substring(0, 100) + "...";
    throw ApiError.of(400, field + " must be an ISO-8601 date-time such as 2026-07-30T11:02:44Z, got " + shown);
  }

  /** {@code t} when its UTC year is 0001 to 9999, else a 400 naming {@code field}. */
  public static OffsetDateTime inRange(String field, OffsetDateTime t) {
    int year = t.withOffsetSameInstant(ZoneOffset.UTC).getYear();
    if (year < MIN_YEAR || year > MAX_YEAR) {
      throw ApiError.of(400, field + " must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z");
    }
    return t;
  }
}
