package io.queenvertx.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TimestampsTest {
  private static final DateTimeFormatter REFERENCE = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'");

  @Test
  void microsWritesWhatTheFormatterWritesInUtc() {
    Random rnd = new Random(39);
    for (int i = 0; i < 20_000; i++) {
      long second = rnd.nextLong(OffsetDateTime.of(1, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toEpochSecond(),
          OffsetDateTime.of(9999, 12, 31, 23, 59, 59, 0, ZoneOffset.UTC).toEpochSecond());
      int nanos = switch (i % 4) {
        case 0 -> 0;
        case 1 -> 999_999_999;
        case 2 -> rnd.nextInt(1000) * 1000;
        default -> rnd.nextInt(1_000_000_000);
      };
      ZoneOffset zone = i % 3 == 0 ? ZoneOffset.UTC : ZoneOffset.ofTotalSeconds(rnd.nextInt(-18 * 3600, 18 * 3600) / 60 * 60);
      OffsetDateTime t = OffsetDateTime.ofInstant(java.time.Instant.ofEpochSecond(second, nanos), zone);
      assertEquals(t.withOffsetSameInstant(ZoneOffset.UTC).format(REFERENCE), Timestamps.micros(t), t.toString());
    }
  }

  @Test
  void microsOfAYearBeyondFourDigitsAndOfNothing() {
    OffsetDateTime far = OffsetDateTime.of(12345, 6, 7, 8, 9, 10, 123_456_789, ZoneOffset.UTC);
    assertEquals("+12345-06-07T08:09:10.123456Z", Timestamps.micros(far));
    assertEquals("2026-12-06T08:47:15.000001Z",
        Timestamps.micros(OffsetDateTime.of(2026, 12, 6, 9, 47, 15, 1_999, ZoneOffset.ofHours(1))));
    OffsetDateTime yearZero = OffsetDateTime.of(0, 1, 2, 3, 4, 5, 6_000, ZoneOffset.UTC);
    assertEquals(yearZero.format(REFERENCE), Timestamps.micros(yearZero)); // year of era: 0001
    assertEquals(null, Timestamps.micros(null));
  }
}
