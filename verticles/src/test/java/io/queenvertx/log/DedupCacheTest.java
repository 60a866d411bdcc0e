package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.codec.TxnHash;
import java.io.ByteArrayOutputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class DedupCacheTest {
  static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
  static final PartitionKey KEY = new PartitionKey(TENANT, "q", "p");
  static final UUID PID = UUID.randomUUID();
  static final long T0 = 1_800_000_000_000_000L;
  static final long SECOND = 1_000_000L;

  static byte[] packed(String... txns) {
    var out = new ByteArrayOutputStream();
    for (String t : txns) out.writeBytes(TxnHash.of(t));
    return out.toByteArray();
  }


  @Test
  void nothingIsPromisedForAPartitionItNeverSaw() {
    var c = new DedupCache(16);
    assertThat(c.claim(KEY, packed("a"))).isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.written(KEY, PID, 7, 1, packed("a"), T0, 3600)).as("an old partition needs a warm-up")
        .isEqualTo(DedupCache.Next.WARM);
    assertThat(c.claim(KEY, packed("b"))).isEqualTo(DedupCache.Claim.NONE);
  }

  @Test
  void aFreshPartitionIsCoveredFromItsFirstSegment() {
    var c = new DedupCache(16);
    assertThat(c.written(KEY, PID, 0, 2, packed("a", "b"), T0, 3600)).isEqualTo(DedupCache.Next.NOTHING);
    assertThat(c.claim(KEY, packed("c", "d"))).isEqualTo(new DedupCache.Claim(1, PID));
    assertThat(c.claim(KEY, packed("c", "b"))).as("a known hash withdraws the promise").isEqualTo(DedupCache.Claim.NONE);
    c.written(KEY, PID, 2, 1, packed("c"), T0 + SECOND, 3600);
    assertThat(c.claim(KEY, packed("d")).verified()).isEqualTo(2);
    assertThat(c.size()).isEqualTo(3);
  }

  @Test
  void aGapWrittenByOthersHoldsThePromiseBelowItUntilFilled() {
    var c = new DedupCache(16);
    c.written(KEY, PID, 0, 2, packed("a", "b"), T0, 3600);
    // offsets 2..4 were written elsewhere; ours landed at 5..6
    assertThat(c.written(KEY, PID, 5, 2, packed("f", "g"), T0 + 1, 3600)).isEqualTo(DedupCache.Next.FILL);
    assertThat(c.claim(KEY, packed("z")).verified()).as("only up to the gap").isEqualTo(1);
    assertThat(c.claim(KEY, packed("g"))).isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.gapStart(KEY, PID)).isEqualTo(1);
    // the fill sees the gap's rows and our own segment (it committed before the read)
    boolean gapLeft = c.filled(KEY, PID, 1, List.of(
        new DedupCache.TxnRow(2, 4, packed("c", "d", "e"), T0 + 1),
        new DedupCache.TxnRow(5, 6, packed("f", "g"), T0 + 1)));
    assertThat(gapLeft).isFalse();
    assertThat(c.claim(KEY, packed("z")).verified()).isEqualTo(6);
    assertThat(c.claim(KEY, packed("d"))).isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.size()).as("our own segment counted once").isEqualTo(7);
    assertThat(c.gapStart(KEY, PID)).isEqualTo(-2);
  }

  @Test
  void aPartialFillKeepsTheRestOfTheGapOpen() {
    var c = new DedupCache(16);
    c.written(KEY, PID, 0, 1, packed("a"), T0, 3600);
    c.written(KEY, PID, 10, 1, packed("k"), T0, 3600);
    assertThat(c.filled(KEY, PID, 0, List.of(new DedupCache.TxnRow(1, 4, packed("b", "c", "d", "e"), T0)))).isTrue();
    assertThat(c.claim(KEY, packed("z")).verified()).isEqualTo(4);
    assertThat(c.filled(KEY, PID, 0, List.of())).as("a stale fill is ignored").isFalse();
    assertThat(c.claim(KEY, packed("z")).verified()).isEqualTo(4);
  }

  @Test
  void purgedRowsInAGapAreOlderThanAnyWindowAndSkipped() {
    var c = new DedupCache(16);
    c.written(KEY, PID, 0, 1, packed("a"), T0, 3600);
    c.written(KEY, PID, 9, 1, packed("j"), T0, 3600);
    assertThat(c.filled(KEY, PID, 0, List.of(new DedupCache.TxnRow(5, 8, packed("f", "g", "h", "i"), T0),
        new DedupCache.TxnRow(9, 9, packed("j"), T0)))).isFalse();
    assertThat(c.claim(KEY, packed("z")).verified()).isEqualTo(9);
  }

  @Test
  void warmUpCoversUpToTheLastOffsetReadWithTheRows() {
    var c = new DedupCache(16);
    c.warmed(KEY, PID, 3600, 41, List.of(new DedupCache.TxnRow(40, 41, packed("x", "y"), T0)));
    assertThat(c.claim(KEY, packed("z"))).isEqualTo(new DedupCache.Claim(41, PID));
    assertThat(c.claim(KEY, packed("y"))).isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.written(KEY, PID, 42, 1, packed("z"), T0 + SECOND, 3600)).isEqualTo(DedupCache.Next.NOTHING);
    assertThat(c.claim(KEY, packed("w")).verified()).isEqualTo(42);
  }

  @Test
  void aDifferentPartitionUnderTheSameNameOrALongerWindowStartsOver() {
    var c = new DedupCache(16);
    c.written(KEY, PID, 0, 1, packed("a"), T0, 60);
    UUID other = UUID.randomUUID();
    assertThat(c.written(KEY, other, 0, 1, packed("b"), T0, 60)).isEqualTo(DedupCache.Next.NOTHING);
    assertThat(c.claim(KEY, packed("a"))).as("the old partition's hashes are gone")
        .isEqualTo(new DedupCache.Claim(0, other));
    assertThat(c.written(KEY, other, 1, 1, packed("c"), T0, 600)).as("window grew: rebuild")
        .isEqualTo(DedupCache.Next.WARM);
    assertThat(c.claim(KEY, packed("z"))).isEqualTo(DedupCache.Claim.NONE);
    c.written(KEY, other, 2, 1, packed("d"), T0, 0);
    assertThat(c.partitions()).as("window 0: never probed, never cached").isZero();
  }

  @Test
  void fingerprintsOlderThanTheWindowExpireButCoverageStays() {
    var c = new DedupCache(16);
    c.written(KEY, PID, 0, 1, packed("old"), T0, 10);
    long later = T0 + (10 + 121) * SECOND;
    for (int i = 1; i <= 5; i++) c.written(KEY, PID, i, 1, packed("n" + i), later + i * 3 * SECOND, 10);
    assertThat(c.claim(KEY, packed("old"))).as("expired: out of every window")
        .isEqualTo(new DedupCache.Claim(5, PID));
    assertThat(c.claim(KEY, packed("n5"))).isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.size()).isLessThanOrEqualTo(5);
  }

  @Test
  void theBudgetEvictsTheLeastRecentlyUsedPartitions() {
    var c = new DedupCache(1); // 65536 fingerprints
    var k1 = new PartitionKey(TENANT, "q", "1");
    var k2 = new PartitionKey(TENANT, "q", "2");
    UUID p2 = UUID.randomUUID();
    byte[] many = new byte[40_000 * TxnHash.BYTES];
    new Random(1).nextBytes(many);
    c.written(k1, PID, 0, 40_000, many, T0, 3600);
    byte[] more = new byte[40_000 * TxnHash.BYTES];
    new Random(2).nextBytes(more);
    c.written(k2, p2, 0, 40_000, more, T0, 3600);
    assertThat(c.size()).isLessThanOrEqualTo(65536);
    assertThat(c.claim(k1, packed("z"))).as("k1 evicted").isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.claim(k2, packed("z")).verified()).isEqualTo(39_999);
  }

  @Test
  void dropQueueForgetsOnlyThatQueue() {
    var c = new DedupCache(16);
    var other = new PartitionKey(TENANT, "r", "p");
    c.written(KEY, PID, 0, 1, packed("a"), T0, 3600);
    c.written(other, UUID.randomUUID(), 0, 1, packed("a"), T0, 3600);
    c.dropQueue(TENANT.toString(), "q");
    assertThat(c.claim(KEY, packed("z"))).isEqualTo(DedupCache.Claim.NONE);
    assertThat(c.claim(other, packed("z")).verified()).isZero();
    assertThat(c.size()).isEqualTo(1);
  }

  @Test
  void theLongSetFindsExactlyWhatWasAdded() {
    var s = new DedupCache.LongSet();
    var r = new Random(7);
    Set<Long> ref = new HashSet<>();
    for (int i = 0; i < 100_000; i++) {
      long v = r.nextLong() | 1;
      assertThat(s.add(v)).isEqualTo(ref.add(v));
    }
    assertThat(s.size()).isEqualTo(ref.size());
    for (long v : ref) assertThat(s.contains(v)).isTrue();
    int falseHits = 0;
    for (int i = 0; i < 100_000; i++) {
      long v = r.nextLong() | 1;
      if (!ref.contains(v) && s.contains(v)) falseHits++;
    }
    assertThat(falseHits).isZero();
  }
}
