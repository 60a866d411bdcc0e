package io.queenvertx.http.routes;

import io.queenvertx.http.server.IsoTime;
import io.queenvertx.kernel.ApiError;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * The time window of an analytics route: {@code from} and {@code to} as ISO-8601 (with an offset or {@code Z}; a date
 * and time without one is UTC; a bare date is its midnight UTC). Absent, {@code to} is now and {@code from} one hour
 * before {@code to}. An unreadable value, one outside the years 0001 to 9999 ({@link IsoTime#inRange}), or
 * {@code from} after {@code to}, is a 400 naming the field. The bucket
 * width of a chart is chosen so the window has at most {@code points} buckets (default {@value #DEFAULT_POINTS},
 * at most {@value #MAX_POINTS}), in whole minutes: the counters are per minute.
 */
record Window(OffsetDateTime from, OffsetDateTime to, int bucketSeconds) {
  static final int DEFAULT_POINTS = 360;
  static final int MAX_POINTS = 2_000;
  /** The widest window accepted: ten years, far beyond any counter retention. */
  static final Duration MAX_SPAN = Duration.ofDays(3_660);

  static Window of(RoutingContext ctx) {
    OffsetDateTime to = time(ctx, "to");
    OffsetDateTime from = time(ctx, "from");
    if (to == null) to = OffsetDateTime.now(ZoneOffset.UTC);
    if (from == null) from = to.minusHours(1);
    if (from.isAfter(to)) throw ApiError.of(400, "from must not be after to");
    if (Duration.between(from, to).compareTo(MAX_SPAN) > 0) {
      throw ApiError.of(400, "from must be at most " + MAX_SPAN.toDays() + " days before to");
    }
    int points = Math.min(Math.max(StatusRoutes.qint(ctx, "points", DEFAULT_POINTS), 1), MAX_POINTS);
    long span = Math.max(Duration.between(from, to).toSeconds(), 1);
    long minutes = Math.max(1, (span + 60L * points - 1) / (60L * points));
    return new Window(from, to, (int) (minutes * 60));
  }

  long spanSeconds() {
    return Duration.between(from, to).toSeconds();
  }

  private static OffsetDateTime time(RoutingContext ctx, String name) {
    String v = ctx.request().getParam(name);
    if (v == null || v.isBlank()) return null;
    String s = v.strip();
    try {
      return IsoTime.inRange(name, OffsetDateTime.parse(s).withOffsetSameInstant(ZoneOffset.UTC));
    } catch (DateTimeParseException e) {
      // not with an offset: try the forms without one
    }
    try {
      return IsoTime.inRange(name, LocalDateTime.parse(s).atOffset(ZoneOffset.UTC));
    } catch (DateTimeParseException e) {
      // not a local date-time either
    }
    try {
      return IsoTime.inRange(name, LocalDate.parse(s).atStartOfDay().atOffset(ZoneOffset.UTC));
    } catch (DateTimeParseException e) {
      throw ApiError.of(400, name + " must be an ISO-8601 timestamp (e.g. 2024-01-31T12:00:00Z), got " + shown(s));
    }
  }

  private static String shown(String s) {
    return s.length() > 64 ? s.substring(0, 64) + "..." : s;
  }
}
