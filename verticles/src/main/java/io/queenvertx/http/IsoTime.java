package io.queenvertx.http;

import io.vertx.core.json.Json;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * Timestamps a client sends in a management body (seek, subscription): ISO-8601 with an offset or {@code Z}
 * ({@code 2026-07-30T11:02:44.512873Z}); a date-time without an offset, or a bare date, is read as UTC. Anything else
 * is a 400 naming the field.
 */
final class IsoTime {
  private IsoTime() {}

  static OffsetDateTime parse(String field, Object value) {
    if (value instanceof String s) {
      String t = s.strip();
      try {
        return OffsetDateTime.parse(t);
      } catch (DateTimeParseException withoutOffset) {
        try {
          return LocalDateTime.parse(t).atOffset(ZoneOffset.UTC);
        } catch (DateTimeParseException notDateTime) {
          try {
            return LocalDate.parse(t).atStartOfDay().atOffset(ZoneOffset.UTC);
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
}
