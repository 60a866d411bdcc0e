package io.queenvertx.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

class UuidV7Test {

  private static int counter(UUID id) {
    return (int) (id.getMostSignificantBits() & 0xFFF);
  }

  @Test
  void layoutHasVersion7VariantRfcAndRendersLowercaseHyphenated() {
    for (int i = 0; i < 1000; i++) {
      UUID id = UuidV7.next();
      byte[] b = UuidV7.toBytes(id);
      assertThat(id.version()).isEqualTo(7);
      assertThat(id.variant()).isEqualTo(2);
      assertThat(b[6] & 0xF0).isEqualTo(0x70);
      assertThat(b[8] & 0xC0).isEqualTo(0x80);
      assertThat(id.toString()).matches("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    }
  }

  @Test
  void firstSixBytesAreTheUnixMillisBigEndian() {
    long before = System.currentTimeMillis();
    UUID id = UuidV7.next();
    long after = System.currentTimeMillis();
    byte[] b = UuidV7.toBytes(id);
    long millis = 0;
    for (int i = 0; i < 6; i++) {
      millis = (millis << 8) | (b[i] & 0xFF);
    }
    assertThat(millis).isEqualTo(UuidV7.unixMillis(id));
    // the process generator may run ahead of the clock after a burst, never behind it
    assertThat(millis).isGreaterThanOrEqualTo(before).isLessThanOrEqualTo(after + 1000);
  }

  @Test
  void counterRestartsAtZeroInANewMillisecondAndCountsWithinOne() {
    AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    UuidV7 gen = new UuidV7(clock::get);
    UUID a = gen.mint();
    UUID b = gen.mint();
    assertThat(UuidV7.unixMillis(a)).isEqualTo(1_700_000_000_000L);
    assertThat(counter(a)).isZero();
    assertThat(counter(b)).isEqualTo(1);
    assertThat(b.toString().substring(14, 18)).isEqualTo("7001");
    clock.set(1_700_000_000_005L);
    UUID c = gen.mint();
    assertThat(UuidV7.unixMillis(c)).isEqualTo(1_700_000_000_005L);
    assertThat(counter(c)).isZero();
  }

  @Test
  void counterOverflowBorrowsTheNextMillisecondInsteadOfWrapping() {
    long t = 1_700_000_000_000L;
    AtomicLong clock = new AtomicLong(t);
    UuidV7 gen = new UuidV7(clock::get);
    UUID last = null;
    for (int i = 0; i < 4096; i++) {
      last = gen.mint();
    }
    assertThat(UuidV7.unixMillis(last)).isEqualTo(t);
    assertThat(counter(last)).isEqualTo(4095);
    UUID borrowed = gen.mint();
    assertThat(UuidV7.unixMillis(borrowed)).isEqualTo(t + 1);
    assertThat(counter(borrowed)).isZero();
    // when the wall clock reaches the borrowed millisecond, counting continues rather than restarting
    clock.set(t + 1);
    assertThat(counter(gen.mint())).isEqualTo(1);
  }

  @Test
  void aClockSteppingBackwardsNeverMakesIdsGoBackwards() {
    AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    UuidV7 gen = new UuidV7(clock::get);
    UUID before = gen.mint();
    clock.set(1_600_000_000_000L);
    UUID after = gen.mint();
    assertThat(Long.compareUnsigned(after.getMostSignificantBits(), before.getMostSignificantBits())).isPositive();
    assertThat(UuidV7.unixMillis(after)).isEqualTo(1_700_000_000_000L);
  }

  @Test
  void idsStrictlyIncreaseAsTextAndAreUniqueAcrossThreads() throws Exception {
    int threads = 4;
    int perThread = 50_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<List<UUID>>> runs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        runs.add(pool.submit(() -> {
          start.await();
          List<UUID> ids = new ArrayList<>(perThread);
          for (int i = 0; i < perThread; i++) {
            ids.add(UuidV7.next());
          }
          return ids;
        }));
      }
      start.countDown();
      Set<Long> allMsb = new HashSet<>();
      Set<UUID> all = new HashSet<>();
      for (Future<List<UUID>> run : runs) {
        List<UUID> ids = run.get();
        for (int i = 1; i < ids.size(); i++) {
          assertThat(ids.get(i).toString()).isGreaterThan(ids.get(i - 1).toString());
        }
        ids.forEach(id -> allMsb.add(id.getMostSignificantBits()));
        all.addAll(ids);
      }
      // (millis, counter) is handed out once per process, so even the time-ordered half is unique
      assertThat(allMsb).hasSize(threads * perThread);
      assertThat(all).hasSize(threads * perThread);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void randomBitsDifferBetweenIds() {
    Set<Long> lsb = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      lsb.add(UuidV7.next().getLeastSignificantBits());
    }
    assertThat(lsb).hasSize(1000);
  }

  @Test
  void zeroIsTheAllZeroUuid() {
    assertThat(UuidV7.ZERO.toString()).isEqualTo("00000000-0000-0000-0000-000000000000");
    assertThat(UuidV7.toBytes(UuidV7.ZERO)).containsOnly(0);
    assertThat(UuidV7.fromBytes(new byte[16], 0)).isEqualTo(UuidV7.ZERO);
  }

  @Test
  void bytesAreBigEndianInTextOrder() {
    UUID id = UUID.fromString("0190a6b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b");
    assertThat(TxnHash.hex(UuidV7.toBytes(id))).isEqualTo("0190a6b23c4d7e5f8a9b0c1d2e3f4a5b");
  }

  @Test
  void fromBytesRejectsFewerThanSixteenBytes() {
    assertThatThrownBy(() -> UuidV7.fromBytes(new byte[20], 5)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> UuidV7.fromBytes(new byte[20], -1)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(UuidV7.fromBytes(new byte[20], 4)).isEqualTo(UuidV7.ZERO);
  }

  @Property(tries = 300)
  void toBytesAndFromBytesRoundTripAtAnyOffset(@ForAll long msb, @ForAll long lsb, @ForAll byte pad) {
    UUID id = new UUID(msb, lsb);
    int off = pad & 0x0F;
    byte[] buf = new byte[off + 16 + 3];
    System.arraycopy(UuidV7.toBytes(id), 0, buf, off, 16);
    assertThat(UuidV7.fromBytes(buf, off)).isEqualTo(id);
  }
}
