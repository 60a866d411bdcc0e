package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.OffsetDateTime;
import org.junit.jupiter.api.Test;

/** The dedup reader's clock: a segment's created_at in the microseconds the cache and the reads' at_us use. */
class DedupReaderTest {
  @Test
  void createdAtIsMicrosecondsSinceTheEpochWhateverItsOffset() {
    assertThat(DedupReader.micros(OffsetDateTime.parse("1970-01-01T00:00:01.000002Z"))).isEqualTo(1_000_002L);
    assertThat(DedupReader.micros(OffsetDateTime.parse("2026-12-04T20:00:00.123456789+02:00")))
        .isEqualTo(OffsetDateTime.parse("2026-12-04T18:00:00Z").toEpochSecond() * 1_000_000L + 123_456L);
  }
}
